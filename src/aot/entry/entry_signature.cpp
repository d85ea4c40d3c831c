#include "aot/entry/entry_signature.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include "aot/entry/hashing.hpp"
#include "sys/safe_file.hpp"

namespace vyre::aot {
// Named, not anonymous: EntrySigner::Key and TrustedKeys::Key hold one, and a
// class of external linkage with a member of an anonymous type is an error
// once a unity build puts this file beside another (-Wsubobject-linkage).
namespace entry_signature_detail {
struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
}  // namespace entry_signature_detail
using Pkey = std::unique_ptr<EVP_PKEY, entry_signature_detail::PkeyDeleter>;

namespace {

constexpr uint64_t kMaxKeyFileBytes = 16u << 10;

std::string to_hex(const unsigned char* bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

sys::Result<std::string> read_key_file(const std::filesystem::path& path, bool secret) {
  std::filesystem::path absolute = std::filesystem::absolute(path);
  sys::Fd dir(::open(absolute.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return sys::failure(sys::Fault::io, "cannot open the folder of " + path.string(), errno);
  // A public key may come from anyone (a CI account); a private key must be ours.
  auto file = sys::read_file_at(dir.get(), absolute.filename().string(), kMaxKeyFileBytes,
                                secret ? sys::OwnerRule::self : sys::OwnerRule::any);
  if (!file) {
    sys::Failure f = file.failure();
    f.message = path.string() + ": " + f.message;
    return f;
  }
  if (secret) {
    struct stat st {};
    if (::fstatat(dir.get(), absolute.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 077) != 0)
      return sys::failure(sys::Fault::unsafe, path.string() + " can be read by other users: `chmod 600 " +
                                                  path.string() + "` (a signing key must stay secret)");
  }
  return std::move(file->data);
}

sys::Result<std::string> raw_public(EVP_PKEY* key, const std::filesystem::path& path) {
  unsigned char raw[32];
  size_t n = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &n) != 1 || n != sizeof raw)
    return sys::failure(sys::Fault::malformed, path.string() + ": cannot read the Ed25519 public key");
  return std::string(reinterpret_cast<char*>(raw), n);
}

sys::Failure not_ed25519(const std::filesystem::path& path, const char* what) {
  return sys::failure(sys::Fault::malformed,
                      path.string() + " is not an Ed25519 " + what +
                          " in PEM; make one with `openssl genpkey -algorithm ed25519 -out signing.pem` and "
                          "`openssl pkey -in signing.pem -pubout -out signing.pub`");
}

struct LoadedKey {
  Pkey pkey;
  std::string id;
};

// An Ed25519 key from a PEM file, private (ours alone) or public, with its id.
sys::Result<LoadedKey> load_key(const std::filesystem::path& path, bool secret) {
  auto text = read_key_file(path, secret);
  if (!text) return text.failure();
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())), BIO_free);
  Pkey key(secret ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                  : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key || EVP_PKEY_get_id(key.get()) != EVP_PKEY_ED25519)
    return not_ed25519(path, secret ? "private key" : "public key");
  auto raw = raw_public(key.get(), path);
  if (!raw) return raw.failure();
  return LoadedKey{std::move(key), ed25519_key_id(*raw)};
}

}  // namespace

std::string ed25519_key_id(std::string_view raw_public_key) { return sha256_hex(raw_public_key).substr(0, 16); }

std::string signed_message(const Metadata& meta, std::string_view kind) {
  KeyEncoder e;
  e.text("vyre-aot-signature").u32(meta.format).text(kind).text(meta.key).text(meta.content_sha256).text(
      std::to_string(meta.wgsl_bytes));
  return e.bytes();
}

struct EntrySigner::Key {
  Pkey pkey;
};

EntrySigner::EntrySigner(std::unique_ptr<Key> key, std::string key_id) : key_(std::move(key)), key_id_(std::move(key_id)) {}
EntrySigner::~EntrySigner() = default;

sys::Result<std::shared_ptr<const EntrySigner>> EntrySigner::load(const std::filesystem::path& pem) {
  auto loaded = load_key(pem, true);
  if (!loaded) return loaded.failure();
  auto k = std::make_unique<Key>();
  k->pkey = std::move(loaded->pkey);
  return std::shared_ptr<const EntrySigner>(new EntrySigner(std::move(k), loaded->id));
}

std::string EntrySigner::sign(const Metadata& meta, std::string_view kind) const {
  const std::string message = signed_message(meta, kind);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char signature[64];
  size_t length = sizeof signature;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_->pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), signature, &length, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1)
    return {};  // unsigned: a reader that requires signatures rejects it
  return "ed25519:" + key_id_ + ":" + to_hex(signature, length);
}

struct TrustedKeys::Key {
  Pkey pkey;
  std::string id;
};

TrustedKeys::~TrustedKeys() = default;

sys::Result<std::shared_ptr<const TrustedKeys>> TrustedKeys::load(const std::vector<std::filesystem::path>& pems) {
  std::shared_ptr<TrustedKeys> keys(new TrustedKeys());
  for (const auto& path : pems) {
    auto loaded = load_key(path, false);
    if (!loaded) return loaded.failure();
    auto k = std::make_unique<Key>();
    k->pkey = std::move(loaded->pkey);
    k->id = std::move(loaded->id);
    keys->keys_.push_back(std::move(k));
  }
  return std::shared_ptr<const TrustedKeys>(std::move(keys));
}

bool TrustedKeys::accepts(const EntrySigner* signer) const {
  if (signer == nullptr) return false;
  Metadata probe = make_metadata(KeyParts{}, "", "", 0);  // what is signed does not matter, who signs does
  probe.signature = signer->sign(probe);
  return verify(probe).ok();
}

sys::Result<void> TrustedKeys::verify(const Metadata& meta, std::string_view kind) const {
  auto untrusted = [](std::string why) { return sys::failure(sys::Fault::untrusted, std::move(why)); };
  if (meta.signature.empty()) return untrusted("unsigned, and trusted keys are set");
  // "ed25519:<16 hex>:<128 hex>"
  const std::string& s = meta.signature;
  if (s.size() != 8 + 16 + 1 + 128 || !s.starts_with("ed25519:") || s[24] != ':')
    return untrusted("signature is not in the form ed25519:<key id>:<signature>");
  const std::string id = s.substr(8, 16);
  const auto decoded = from_hex(std::string_view(s).substr(25));
  if (!decoded) return untrusted("signature is not hexadecimal");
  const std::string& signature = *decoded;
  for (const auto& key : keys_) {
    if (key->id != id) continue;
    const std::string message = signed_message(meta, kind);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key->pkey.get()) == 1 &&
        EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                         reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1)
      return {};
    return untrusted("signature by key " + id + " does not verify");
  }
  return untrusted("signed by key " + id + ", which is not among VYRE_AOT_TRUSTED_KEYS");
}

}  // namespace vyre::aot

// Authorship of cache entries: Ed25519 signatures through OpenSSL. A digest
// proves that an entry is intact, not who made it: anyone who can write a
// shared store can compute the key formula and a matching content_sha256. A
// writer with VYRE_AOT_SIGNING_KEY signs what it publishes; a reader with
// VYRE_AOT_TRUSTED_KEYS serves entries from places others can write (the
// remote tier, layers of other users, a group-writable directory) only when
// one of those keys signed them (docs/cache.md, "Signatures").
//
// What is signed: the entry's format, its artifact kind ("wgsl"; another kind
// such as a tuning record signs the same way), its key (which proves every
// key component) and the digest and size of its content. The program label
// and the timings are informational and not covered.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aot/entry/entry.hpp"
#include "sys/result.hpp"

namespace vyre::aot {

inline constexpr std::string_view kWgslArtifact = "wgsl";

// The bytes a signature covers (length-prefixed like the key derivation).
std::string signed_message(const Metadata& meta, std::string_view kind);

class EntrySigner {
 public:
  // An Ed25519 private key in PEM, a file of the user's own that no one
  // else may read (as ssh requires of its keys).
  static sys::Result<std::shared_ptr<const EntrySigner>> load(const std::filesystem::path& pem);
  ~EntrySigner();
  // "ed25519:<key id>:<signature hex>" for the metadata's `signature` field.
  std::string sign(const Metadata& meta, std::string_view kind = kWgslArtifact) const;
  const std::string& key_id() const { return key_id_; }

 private:
  struct Key;
  EntrySigner(std::unique_ptr<Key> key, std::string key_id);
  std::unique_ptr<Key> key_;
  std::string key_id_;
};

class TrustedKeys {
 public:
  // Ed25519 public keys in PEM (`openssl pkey -pubout`), one per file.
  static sys::Result<std::shared_ptr<const TrustedKeys>> load(const std::vector<std::filesystem::path>& pems);
  ~TrustedKeys();
  // Success when a trusted key signed this entry; untrusted otherwise, with
  // what was wrong (unsigned, an unknown key, a signature that does not
  // verify).
  sys::Result<void> verify(const Metadata& meta, std::string_view kind = kWgslArtifact) const;
  // Whether entries this signer signs pass verify(): false for a null signer.
  bool accepts(const EntrySigner* signer) const;
  size_t size() const { return keys_.size(); }

 private:
  struct Key;
  TrustedKeys() = default;
  std::vector<std::unique_ptr<Key>> keys_;
};

// The identity of a public key: the first 16 hex digits of the SHA-256 of
// its 32 raw bytes.
std::string ed25519_key_id(std::string_view raw_public_key);

}  // namespace vyre::aot

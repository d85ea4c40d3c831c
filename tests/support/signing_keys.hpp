// Ed25519 key pairs for the signature tests, made with OpenSSL and written
// as PEM files (private 0600, public 0644).
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace vyre::test {

struct KeyPair {
  std::filesystem::path private_pem;
  std::filesystem::path public_pem;
};

inline KeyPair make_key_pair(const std::filesystem::path& dir, const std::string& name) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (key == nullptr) throw std::runtime_error("cannot make an Ed25519 key");
  KeyPair pair{dir / (name + ".pem"), dir / (name + ".pub")};
  FILE* f = std::fopen(pair.private_pem.c_str(), "w");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  ::chmod(pair.private_pem.c_str(), 0600);
  f = std::fopen(pair.public_pem.c_str(), "w");
  PEM_write_PUBKEY(f, key);
  std::fclose(f);
  ::chmod(pair.public_pem.c_str(), 0644);
  EVP_PKEY_free(key);
  return pair;
}

}  // namespace vyre::test

#include "rpc/tls_ip_client.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <climits>
#include <memory>

#include <kj/debug.h>

#include "rpc/client.hpp"

namespace cuzk::rpc {

namespace {

std::string ssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(e, line, sizeof line);
    if (!out.empty()) out += "; ";
    out += line;
  }
  return out.empty() ? "no OpenSSL detail" : out;
}

struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using Ctx = std::unique_ptr<SSL_CTX, CtxFree>;

// A client context trusting exactly the certificates of `ca_pem`.
Ctx client_context(const std::string& ca_pem) {
  Ctx ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) throw ClientError("TLS context: " + ssl_errors(), ClientErrorKind::kConfig);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  BIO_free(bio);
  ERR_clear_error();  // the read that ended the loop (no more PEM blocks)
  if (added == 0) throw ClientError("CA file: no PEM certificate", ClientErrorKind::kConfig);
  return ctx;
}

// TLS over `inner` through two memory BIOs: OpenSSL never blocks, the kj
// stream moves the bytes. Writes to `inner` are chained in order (capnp may
// write while a read is pending).
class IpTlsStream final : public kj::AsyncIoStream {
 public:
  IpTlsStream(kj::Own<kj::AsyncIoStream> inner, SSL_CTX* ctx, const std::string& ip) : inner_(kj::mv(inner)) {
    ssl_ = SSL_new(ctx);  // takes its own reference to ctx
    KJ_REQUIRE(ssl_ != nullptr, "SSL_new", ssl_errors());
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    KJ_REQUIRE(in_ != nullptr && out_ != nullptr, "BIO_new", ssl_errors());
    SSL_set_bio(ssl_, in_, out_);  // the SSL owns both
    SSL_set_connect_state(ssl_);
    KJ_REQUIRE(X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), ip.c_str()) == 1, "not an IP address", ip);
  }
  ~IpTlsStream() noexcept(false) { SSL_free(ssl_); }
  KJ_DISALLOW_COPY(IpTlsStream);

  kj::Promise<void> handshake() {
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) {
      return flush().then([this] {
        KJ_REQUIRE(SSL_get0_peer_certificate(ssl_) != nullptr, "TLS peer provided no certificate");
        const long verdict = SSL_get_verify_result(ssl_);
        KJ_REQUIRE(verdict == X509_V_OK, "TLS peer's certificate is not trusted",
                   X509_verify_cert_error_string(verdict));
      });
    }
    if (SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ && !eof_) {
      return flush().then([this] { return fill(); }).then([this] { return handshake(); });
    }
    return KJ_EXCEPTION(DISCONNECTED, "TLS handshake failed", ssl_errors());
  }

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    return read_loop(static_cast<kj::byte*>(buffer), min_bytes, max_bytes, 0);
  }
  kj::Promise<void> write(const void* buffer, size_t size) override {
    KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { encrypt(static_cast<const kj::byte*>(buffer), size); })) {
      return kj::mv(*e);
    }
    return flush();
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] {
                   for (const auto& p : pieces) encrypt(p.begin(), p.size());
                 })) {
      return kj::mv(*e);
    }
    return flush();
  }
  kj::Promise<void> whenWriteDisconnected() override { return inner_->whenWriteDisconnected(); }
  void shutdownWrite() override {
    (void)SSL_shutdown(ssl_);  // queues close_notify
    shutdown_ = flush().then([this] { inner_->shutdownWrite(); }).eagerlyEvaluate([](kj::Exception&&) {});
  }
  void abortRead() override { inner_->abortRead(); }

 private:
  void encrypt(const kj::byte* p, size_t n) {
    while (n > 0) {
      const int r = SSL_write(ssl_, p, static_cast<int>(std::min<size_t>(n, INT_MAX)));
      KJ_REQUIRE(r > 0, "TLS write failed", ssl_errors());  // a memory BIO takes everything
      p += r;
      n -= static_cast<size_t>(r);
    }
  }

  kj::Promise<size_t> read_loop(kj::byte* buffer, size_t min_bytes, size_t max_bytes, size_t done) {
    while (done < min_bytes) {
      const int r = SSL_read(ssl_, buffer + done, static_cast<int>(std::min<size_t>(max_bytes - done, INT_MAX)));
      if (r > 0) {
        done += static_cast<size_t>(r);
        continue;
      }
      const int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_ZERO_RETURN) return done;  // close_notify
      if (e == SSL_ERROR_WANT_READ) {
        if (eof_) return done;  // the peer closed the TCP stream
        return flush().then([this] { return fill(); }).then([this, buffer, min_bytes, max_bytes, done] {
          return read_loop(buffer, min_bytes, max_bytes, done);
        });
      }
      return KJ_EXCEPTION(DISCONNECTED, "TLS read failed", ssl_errors());
    }
    return done;
  }

  // Ciphertext from the peer into the SSL's input BIO.
  kj::Promise<void> fill() {
    return inner_->tryRead(in_buffer_, 1, sizeof in_buffer_).then([this](size_t n) {
      if (n == 0) {
        eof_ = true;
        return;
      }
      KJ_REQUIRE(BIO_write(in_, in_buffer_, static_cast<int>(n)) == static_cast<int>(n), "BIO_write");
    });
  }

  // Ciphertext the SSL produced, written to the peer after earlier writes.
  kj::Promise<void> flush() {
    const size_t pending = BIO_ctrl_pending(out_);
    if (pending > 0) {
      auto bytes = kj::heapArray<kj::byte>(pending);
      KJ_REQUIRE(BIO_read(out_, bytes.begin(), static_cast<int>(pending)) == static_cast<int>(pending), "BIO_read");
      auto next = writes_.addBranch().then([this, bytes = kj::mv(bytes)]() mutable {
        auto view = bytes.asPtr();
        return inner_->write(view.begin(), view.size()).attach(kj::mv(bytes));
      });
      writes_ = next.fork();
    }
    return writes_.addBranch();
  }

  kj::Own<kj::AsyncIoStream> inner_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // owned by ssl_
  BIO* out_ = nullptr;  // owned by ssl_
  bool eof_ = false;
  kj::byte in_buffer_[16384];
  kj::ForkedPromise<void> writes_ = kj::Promise<void>(kj::READY_NOW).fork();
  kj::Promise<void> shutdown_ = kj::READY_NOW;
};

}  // namespace

bool is_ip_literal(const std::string& host) {
  unsigned char addr[16];
  return ::inet_pton(AF_INET, host.c_str(), addr) == 1 || ::inet_pton(AF_INET6, host.c_str(), addr) == 1;
}

kj::Promise<kj::Own<kj::AsyncIoStream>> tls_connect_ip(kj::Own<kj::AsyncIoStream> stream, const std::string& ca_pem,
                                                       const std::string& ip) {
  Ctx ctx = client_context(ca_pem);
  auto tls = kj::heap<IpTlsStream>(kj::mv(stream), ctx.get(), ip);
  IpTlsStream& handshaking = *tls;
  return handshaking.handshake().then(
      [tls = kj::mv(tls)]() mutable -> kj::Own<kj::AsyncIoStream> { return kj::mv(tls); });
}

}  // namespace cuzk::rpc

// TLS for a client that names the daemon by IP address (tcp://127.0.0.1:9820
// with no --tls-server-name): the daemon's certificate must carry that
// address as an IP subjectAltName. kj-tls checks DNS names only (it hands
// every expected name to X509_VERIFY_PARAM_set1_host, which never matches an
// IP SAN), so this path drives OpenSSL itself over memory BIOs on top of the
// connected kj stream: the chain is verified against the configured CA and
// the address with X509_VERIFY_PARAM_set1_ip_asc; no SNI (RFC 6066 allows
// host names only). DNS names keep kj-tls (rpc/client.cpp).
//
// Threading: the client's KJ loop thread, like every kj stream.
#pragma once

#include <kj/async-io.h>

#include <string>

namespace cuzk::rpc {

// "127.0.0.1", "::1": an IPv4 or IPv6 address literal (no brackets).
bool is_ip_literal(const std::string& host);

// Starts the TLS handshake as a client over `stream`, trusting exactly the
// certificates in `ca_pem` and requiring `ip` in the server certificate's IP
// SANs. The promise breaks (kj DISCONNECTED/FAILED) when the handshake or the
// verification fails. Throws ClientError(kConfig) when `ca_pem` holds no
// certificate.
kj::Promise<kj::Own<kj::AsyncIoStream>> tls_connect_ip(kj::Own<kj::AsyncIoStream> stream, const std::string& ca_pem,
                                                       const std::string& ip);

}  // namespace cuzk::rpc

"""A throw-away certificate authority and server certificate for 127.0.0.1 and localhost, made
at test time, so the email tests run the real TLS paths with verification left on.

``make_certificate(folder)`` writes ``ca.pem`` (what a client is to trust: the bot, which uses
``ssl.create_default_context()``, is pointed at it with SSL_CERT_FILE, which OpenSSL's default
verify paths honour), and ``server.pem`` with ``server.key`` (what Dovecot and aiosmtpd
present). A client that does not trust ``ca.pem`` refuses both servers, as it would a stranger.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Certificate:
    """The files of one test CA and the server certificate it signed."""

    ca: Path  # the CA's certificate, PEM: what a client trusts
    cert: Path  # the server's certificate, PEM
    key: Path  # the server's private key, PEM, unencrypted

    def client_context(self) -> ssl.SSLContext:
        """A verifying client context trusting this CA alone (for the tests' own clients)."""
        return ssl.create_default_context(cafile=str(self.ca))

    def server_context(self) -> ssl.SSLContext:
        """A server context presenting the certificate (aiosmtpd's, both kinds of TLS)."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.cert), str(self.key))
        return context


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def make_certificate(folder: Path, *, authority: str = "Frontdesk test CA") -> Certificate:
    """A new CA (named ``authority``) and a server certificate for 127.0.0.1 and localhost,
    valid from an hour ago for a day, written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (x509.CertificateBuilder().subject_name(_name(authority))
               .issuer_name(_name(authority)).public_key(ca_key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, key_cert_sign=True,
                                            crl_sign=True, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                              critical=False)
               .sign(ca_key, hashes.SHA256()))
    server_key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName("localhost"),
                                     x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server_cert = (x509.CertificateBuilder().subject_name(_name("localhost"))
                   .issuer_name(ca_cert.subject).public_key(server_key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(end)
                   .add_extension(x509.SubjectAlternativeName(names), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                  critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                                  critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                       ca_key.public_key()), critical=False)
                   .sign(ca_key, hashes.SHA256()))
    made = Certificate(ca=folder / "ca.pem", cert=folder / "server.pem",
                       key=folder / "server.key")
    made.ca.write_bytes(_pem(ca_cert))
    made.cert.write_bytes(_pem(server_cert))
    made.key.write_bytes(server_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    made.key.chmod(0o600)
    return made

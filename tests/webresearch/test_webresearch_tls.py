"""https while the connection is pinned to the checked address: the certificate is still checked
against the URL's host name (SNI), not the address connected to."""

from __future__ import annotations

import asyncio
import datetime
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agents.web.download import Downloader, FetchSettings
from agents.web.politeness import DomainLimits, LocalDomainGate

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def self_signed(tmp_path):
    """A certificate for the name `localhost` only (not for 127.0.0.1), and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


class Page(BaseHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_GET(self):  # noqa: N802
        body = b"<html><head><title>Over TLS</title></head><body><p>The tide tables, served over TLS.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_pinned_https_request_checks_the_certificate_against_the_host_name(tmp_path):
    cert_file, key_file = self_signed(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    settings = FetchSettings(allow_private_hosts=True, respect_robots=False, timeout_s=10, ca_file=str(cert_file))

    async def fetch(url: str):
        downloader = Downloader(settings, LocalDomainGate(DomainLimits(min_interval_s=0)))
        try:
            return await downloader.download(url)
        finally:
            await downloader.aclose()

    try:
        by_name = asyncio.run(fetch(f"https://localhost:{port}/tides"))
        assert by_name.status == "fetched" and by_name.text == "The tide tables, served over TLS."
        by_address = asyncio.run(fetch(f"https://127.0.0.1:{port}/tides"))  # the certificate names localhost
        assert by_address.status == "failed" and "CERTIFICATE_VERIFY_FAILED" in by_address.reason
    finally:
        server.shutdown()
        server.server_close()

"""Loaded by every Python process the tests start (tests put this folder on PYTHONPATH): no network but loopback.

A test that tries to reach the Hugging Face Hub, PyPI or anything else fails loudly instead of passing by luck on a
machine that happens to be online. torchrun's rendezvous and gloo stay on 127.0.0.1 and are allowed.
"""

import os

if os.environ.get("R1_GUI_NO_NETWORK") == "1":
    import socket

    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex
    _getaddrinfo = socket.getaddrinfo
    _LOCAL = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "", None)

    def _is_local(host) -> bool:
        return host in _LOCAL or str(host).startswith("127.") or str(host).startswith("::ffff:127.")

    def _check(address) -> None:
        if isinstance(address, (str, bytes)):  # a unix socket
            return
        if not _is_local(address[0]):
            raise OSError(f"network access blocked in r1_gui tests: tried to connect to {address!r}")

    def connect(self, address):
        _check(address)
        return _connect(self, address)

    def connect_ex(self, address):
        _check(address)
        return _connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not _is_local(host) and host != socket.gethostname():
            raise OSError(f"network access blocked in r1_gui tests: tried to resolve {host!r}")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.getaddrinfo = getaddrinfo

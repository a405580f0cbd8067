"""Brings the loopback interface up, then runs the rest of the command line in its place.

A fresh network namespace (`unshare -n`) has `lo` down, so not even 127.0.0.1 works; this
raises it (the kernel then gives it 127.0.0.1/8 and ::1) without needing `ip` installed.
"""
import fcntl
import os
import socket
import struct
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    ifreq = struct.pack("16sH14s", b"lo", 0, b"")
    flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, ifreq))[1]
    if not flags & IFF_UP:
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))

os.execv(sys.argv[1], sys.argv[1:])

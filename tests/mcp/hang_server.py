"""A server that starts and never answers `initialize`: core/tests/mcp.rs checks that the
client gives up on it within its timeout and leaves no process behind."""
import time

while True:
    time.sleep(60)

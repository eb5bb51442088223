#!/usr/bin/env python3
"""Runs a command on a new pseudo-terminal, as a user's shell would, and presses Ctrl-C.

    on_terminal.py LOG PATTERN TIMEOUT -- COMMAND...

The command's output goes to LOG. Once PATTERN (a plain string) appears in it, Ctrl-C is
typed on the terminal (the ^C byte, so the terminal driver signals its foreground process
group, not a kill from outside). Exits with the command's exit code (128 + N when signal N
ended it), or 124 when PATTERN does not appear, or the command does not end, within TIMEOUT
seconds each.
"""
import os
import pty
import select
import sys
import time


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.stderr.write(__doc__)
        return 2
    log_path, pattern, timeout = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[5], sys.argv[5:])
    out = bytearray()
    status = None
    open_fd = True
    with open(log_path, "wb") as log:
        for phase in ("wait-pattern", "wait-exit"):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if open_fd and select.select([fd], [], [], 0.2)[0]:
                    try:
                        chunk = os.read(fd, 65536)
                    except OSError:  # EIO: every writer closed the terminal
                        chunk = b""
                    if chunk:
                        out += chunk
                        log.write(chunk)
                        log.flush()
                    else:
                        open_fd = False
                elif not open_fd:
                    time.sleep(0.1)
                if status is None:
                    got, st = os.waitpid(pid, os.WNOHANG)
                    if got == pid:
                        status = st
                if phase == "wait-pattern" and pattern in out:
                    os.write(fd, b"\x03")
                    break
                if status is not None and (phase == "wait-exit" or not open_fd):
                    break
            else:
                if status is None:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                return 124
            if status is not None and phase == "wait-pattern":
                return 124  # ended before the pattern was seen
        # drain what the command printed while stopping
        while open_fd and select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            log.write(chunk)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())

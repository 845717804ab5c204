"""Runs a command on a pseudo-terminal for a test, as a person at a terminal would.

    python3 pty-driver.py <rows> <cols> <command> [args...]

Everything the command writes to the terminal is copied to this process's
stdout. Lines on this process's stdin drive the terminal:

    type <base64>          bytes typed at the keyboard
    resize <rows> <cols>   the window changes size (the command gets SIGWINCH)

Exits with the command's exit status once it has exited and its output is drained.
"""
import base64, fcntl, os, pty, select, struct, sys, termios

def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

def main():
    rows, cols, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    set_size(master, rows, cols)
    control = sys.stdin.buffer.raw
    pending = b""
    watched = [master, control]
    while master in watched:
        ready, _, _ = select.select(watched, [], [])
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if not data:
                watched.remove(master)
            else:
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
        if control in ready:
            chunk = os.read(control.fileno(), 65536)
            if not chunk:
                watched.remove(control)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                verb, *args = line.decode().split()
                if verb == "type":
                    os.write(master, base64.b64decode(args[0]))
                elif verb == "resize":
                    set_size(master, int(args[0]), int(args[1]))
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)

main()

# A PMI-2 client on the wire, as MPI libraries built on Slurm's libpmi2 speak it: init, fullinit,
# put this rank's key, fence across the step's nodes, get the next rank's key and the process
# mapping.
import os
import socket
import sys

sock = socket.socket(fileno=int(os.environ["PMI_FD"]))


def call(body):
    sock.sendall(b"%-6d" % len(body) + body.encode())
    length = int(read(6))
    fields = {}
    for pair in read(length).decode().rstrip(";").split(";"):
        key, _, value = pair.partition("=")
        fields[key] = value
    return fields


def read(n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise SystemExit("PMI socket closed")
        data += chunk
    return data


sock.sendall(b"cmd=init pmi_version=2 pmi_subversion=0\n")
line = b""
while not line.endswith(b"\n"):
    line += sock.recv(1)
assert b"rc=0" in line, line
init = call("cmd=fullinit;pmirank=%s;threaded=FALSE;" % os.environ["PMI_RANK"])
rank, size = int(init["rank"]), int(init["size"])
assert call("cmd=kvs-put;key=host-%d;value=%s;" % (rank, os.environ["SLURMD_NODENAME"]))["rc"] == "0"
assert call("cmd=kvs-fence;")["rc"] == "0"
peer = (rank + 1) % size
got = call("cmd=kvs-get;jobid=%s;srcid=-1;key=host-%d;" % (os.environ["PMI_JOBID"], peer))
mapping = call("cmd=info-getjobattr;key=PMI_process_mapping;")
sys.stdout.write("rank %d of %d: rank %d is on %s; mapping %s\n" % (rank, size, peer, got["value"], mapping["value"]))
sys.stdout.flush()
call("cmd=finalize;")

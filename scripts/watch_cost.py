# One run of scripts/watch-cost: PORT WATCHES -> the time of 200 waited MemberCluster applies.
import json, socket, sys, time, urllib.request
port = int(sys.argv[1]); watches = int(sys.argv[2])
socks = []
for _ in range(watches):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(f"GET /apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters?watch=true HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    socks.append(s)  # never read
time.sleep(1)
pad = "x" * 1800
t = time.time()
for r in range(20):
    body = [{"type": "apply", "manifest": {"apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
             "metadata": {"name": f"m{r}-{i}", "labels": {"pad": "p"}, "annotations": {"pad": pad}}, "spec": {}}} for i in range(10)]
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/events?wait=true", data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    urllib.request.urlopen(req).read()
print(f"watches={watches} 200 applies took {time.time()-t:.2f}s")

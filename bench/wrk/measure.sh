#!/bin/bash
# Starts a search server, warms it with wrk for 3 s, then loads it for 8 s
# (one wrk thread, 32 connections) and prints the server's CPU per request
# (from /proc/PID/stat), wrk's own CPU per request and the wall rate.
#   bench/wrk/measure.sh LABEL PORT SCRIPT.lua -- SERVER COMMAND...
# e.g. bench/wrk/measure.sh service 18181 bodies.lua -- r2med serve-search --index 20k-r2med-v1.idx --addr 127.0.0.1:18181
set -e
label=$1 port=$2 script=$3
shift 4
"$@" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
wrk -t1 -c32 -d3s -s "$script" "http://127.0.0.1:$port" >/dev/null
tck=$(getconf CLK_TCK)
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$({ /usr/bin/time -f 'WRKCPU %U %S' wrk -t1 -c32 -d8s -s "$script" "http://127.0.0.1:$port"; } 2>&1)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
reqs=$(awk '/requests in/{print $1}' <<<"$out")
wcpu=$(awk '/WRKCPU/{print $2+$3}' <<<"$out")
rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
bad=$(awk '/Non-2xx/{print $NF}' <<<"$out")
awk -v l="$label" -v s="$script" -v t0="$t0" -v t1="$t1" -v tck="$tck" -v n="$reqs" -v w="$wcpu" -v r="$rps" -v b="${bad:-0}" \
  'BEGIN{printf "%s %s server_us=%.0f wrk_us=%.0f rps=%s non2xx=%s\n", l, s, (t1-t0)/tck/n*1e6, w/n*1e6, r, b}'

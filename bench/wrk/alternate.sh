#!/bin/bash
# Starts several search servers at once and loads them in turn, a short
# wrk slice each (one wrk thread, 32 connections), for ROUNDS rounds, each
# round starting with another server; then prints each server's CPU per
# request (from /proc/PID/stat) and wrk's own, summed over its slices.
# Slices of seconds, not runs of minutes, put the drifts of a shared
# machine's speed on every server alike.
#   bench/wrk/alternate.sh ROUNDS SECONDS SCRIPT.lua "SERVER COMMAND" "SERVER COMMAND"...
# Each server command gets --addr 127.0.0.1:PORT appended (ports 18191 on).
# e.g. bench/wrk/alternate.sh 6 2 bodies.lua "r2med serve-search --index 20k-r2med-v1.idx" "./floor -index 20k-r2med-v1.idx"
set -e
rounds=$1 secs=$2 script=$3
shift 3
tck=$(getconf CLK_TCK)
cmds=("$@") pids=() ports=() cpu=() reqs=() wcpu=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
for c in "$@"; do
	port=$((18191 + ${#pids[@]}))
	eval "$c --addr 127.0.0.1:$port >/dev/null 2>&1 &"
	pids+=($!) ports+=($port) cpu+=(0) reqs+=(0) wcpu+=(0)
done
n=${#pids[@]}
for port in "${ports[@]}"; do
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
	wrk -t1 -c32 -d2s -s "$script" "http://127.0.0.1:$port" >/dev/null
done
for r in $(seq "$rounds"); do
	for k in $(seq 0 $((n - 1))); do
		j=$(((k + r) % n))
		t0=$(awk '{print $14+$15}' "/proc/${pids[$j]}/stat")
		out=$({ /usr/bin/time -f 'WRKCPU %U %S' wrk -t1 -c32 -d"${secs}s" -s "$script" "http://127.0.0.1:${ports[$j]}"; } 2>&1)
		t1=$(awk '{print $14+$15}' "/proc/${pids[$j]}/stat")
		cpu[j]=$((cpu[j] + t1 - t0))
		reqs[j]=$((reqs[j] + $(awk '/requests in/{print $1}' <<<"$out")))
		wcpu[j]=$(awk -v a="${wcpu[$j]}" '/WRKCPU/{print a+$2+$3}' <<<"$out")
	done
done
for j in $(seq 0 $((n - 1))); do
	awk -v c="${cmds[$j]}" -v s="${cpu[$j]}" -v tck="$tck" -v n="${reqs[$j]}" -v w="${wcpu[$j]}" \
		'BEGIN{printf "server_us=%.0f wrk_us=%.0f requests=%d  %s\n", s/tck/n*1e6, w/n*1e6, n, c}'
done

#!/usr/bin/env bash
# Copies standard input to standard output, each line stamped with the time it arrived
# (HH:MM:SS), so that a long log shows which step took the time. A last line without a
# newline is kept too.
while IFS= read -r line || [[ -n $line ]]; do printf '%(%T)T %s\n' -1 "$line"; done

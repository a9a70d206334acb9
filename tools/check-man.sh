#!/bin/sh
# check-man.sh PAGE - fails when groff has anything to say about PAGE.
warnings=$(groff -man -t -ww -z -Tutf8 "$1" 2>&1 >/dev/null)
[ -z "$warnings" ] && exit 0
echo "$warnings"
exit 1

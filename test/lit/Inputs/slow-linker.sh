#!/bin/sh
# A host linker that never finishes: it records its pid in $FATLINK_TEST_MARK
# (atomically) and sleeps, so a test can interrupt the link mid-way.
echo $$ > "$FATLINK_TEST_MARK.part"
mv "$FATLINK_TEST_MARK.part" "$FATLINK_TEST_MARK"
exec sleep 60

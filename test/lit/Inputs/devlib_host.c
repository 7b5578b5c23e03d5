/* The host's own helper (never called when the region offloads). */
int helper(int x) { return -x; }

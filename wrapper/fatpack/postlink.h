/* postlink.h - private to wrapper/: fatlink as DPC++'s sycl-post-link, which
 * fatlink runs under that name and fatpack as `fatpack post-link`. */
#ifndef LW_POSTLINK_H
#define LW_POSTLINK_H

/* fatlink as DPC++'s sycl-post-link: its command line (argv[0] is the
 * tool's name), its file table and files. Returns the exit status. */
int lw_post_link_main(int argc, char **argv);
/* Does fatlink run under the name sycl-post-link? */
int lw_post_link_named(const char *argv0);

#endif

/*
 * http_serve.h - a static file server on the loopback, for pages that must
 * be loaded over HTTP (a web app that fetches its data: speedscope's
 * #profileURL=).
 *
 * Contract: http_serve_start() listens on 127.0.0.1 at a port the kernel
 * chooses (S->port) and serves the files under ROOT (symbolic links
 * followed) to GET requests, one forked process per connection, with a
 * Content-Type by suffix (html, js, css, json, wasm, png, ico, woff2,
 * txt) and Connection: close; a path with ".." or a missing file is 404.
 * The server runs until http_serve_stop(), which kills it and its
 * connections and reaps it.  Returns false (with errno) if it could not
 * listen.
 */
#ifndef PTPROF_TESTS_HTTP_SERVE_H
#define PTPROF_TESTS_HTTP_SERVE_H

#include <stdbool.h>
#include <sys/types.h>

struct http_server {
    pid_t pid;
    int port;
};

bool http_serve_start(const char *root, struct http_server *s);
void http_serve_stop(struct http_server *s);

#endif

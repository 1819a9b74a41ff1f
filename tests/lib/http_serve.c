/* http_serve.c - see http_serve.h: GET of static files on the loopback. */
#include "http_serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *content_type(const char *path)
{
    static const char *const types[][2] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".wasm", "application/wasm"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".woff2", "font/woff2"},
        {".txt", "text/plain; charset=utf-8"},
    };
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        size_t n = strlen(types[i][0]);
        if (len > n && strcmp(path + len - n, types[i][0]) == 0)
            return types[i][1];
    }
    return "application/octet-stream";
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static int hex(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The request's path, percent-decoded, without its query or fragment. */
static void request_path(const char *req, char *out, size_t cap)
{
    const char *p = strchr(req, ' ');
    size_t n = 0;
    for (p = p ? p + 1 : req; *p && *p != ' ' && *p != '?' && *p != '#' && n + 1 < cap; p++) {
        if (*p == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
            out[n++] = (char)(hex(p[1]) * 16 + hex(p[2]));
            p += 2;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static void serve_one(int fd, const char *root)
{
    char req[8192];
    size_t got = 0;
    while (got + 1 < sizeof(req)) {
        ssize_t r = read(fd, req + got, sizeof(req) - 1 - got);
        if (r <= 0)
            return;
        got += (size_t)r;
        req[got] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    char path[4096];
    request_path(req, path, sizeof(path));
    if (strcmp(path, "/") == 0)
        strcpy(path, "/index.html");
    char *file = NULL;
    int in = -1;
    struct stat st;
    if (strncmp(req, "GET ", 4) == 0 && !strstr(path, "..") &&
        asprintf(&file, "%s%s", root, path) > 0)
        in = open(file, O_RDONLY);
    free(file);
    if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                                 "Connection: close\r\n\r\n";
        write_all(fd, nf, sizeof(nf) - 1);
        if (in >= 0)
            close(in);
        return;
    }
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %lld\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
                     content_type(path), (long long)st.st_size);
    write_all(fd, head, (size_t)n);
    char buf[65536];
    ssize_t r;
    while ((r = read(in, buf, sizeof(buf))) > 0)
        write_all(fd, buf, (size_t)r);
    close(in);
}

bool http_serve_start(const char *root, struct http_server *s)
{
    memset(s, 0, sizeof(*s));
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0)
        return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 64) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) != 0) {
        int e = errno;
        close(ls);
        errno = e;
        return false;
    }
    s->port = ntohs(a.sin_port);
    fflush(NULL);
    s->pid = fork();
    if (s->pid < 0) {
        close(ls);
        return false;
    }
    if (s->pid == 0) {
        /* Its own process group, so that stopping it ends its connections. */
        setpgid(0, 0);
        signal(SIGCHLD, SIG_IGN); /* connections reap themselves */
        for (;;) {
            int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
            if (c < 0) {
                if (errno == EINTR)
                    continue;
                _exit(1);
            }
            pid_t child = fork();
            if (child == 0) {
                close(ls);
                serve_one(c, root);
                shutdown(c, SHUT_WR);
                close(c);
                _exit(0);
            }
            close(c);
        }
    }
    setpgid(s->pid, s->pid); /* also here: no race with the child's own call */
    close(ls);
    return true;
}

void http_serve_stop(struct http_server *s)
{
    if (s->pid <= 0)
        return;
    kill(-s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

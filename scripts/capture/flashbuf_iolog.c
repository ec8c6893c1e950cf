/*
 * flashbuf_iolog: an LD_PRELOAD library that logs the block reads and writes a process
 * makes on the files under one directory, and for every 8 KB block written the exact runs
 * of bytes that differ from the block's on-disk image just before the write.
 *
 * Built by scripts/capture/test_tools.sh or capture.sh:
 *   gcc -O2 -Wall -Wextra -shared -fPIC -o flashbuf_iolog.so flashbuf_iolog.c -ldl
 * Environment:
 *   FLASHBUF_IOLOG       the log file (appended to by every process, one write() per line)
 *   FLASHBUF_IOLOG_ROOT  absolute directory; only files whose path starts with ROOT/base/
 *                        or ROOT/global/ are logged (PostgreSQL's relation files: no WAL,
 *                        no SLRU, no temporary files)
 * Log lines (decoded by iolog_post.py):
 *   R,<t_100ns>,<lat_100ns>,<relpath>,<offset_bytes>,,
 *   W,<t_100ns>,<lat_100ns>,<relpath>,<offset_bytes>,<new>,<ranges>
 * t is the issue time (CLOCK_REALTIME in 100 ns ticks), lat the duration of the real call.
 * new: 0 overwrite (ranges = diff with the old image), 1 beyond the end of the file
 * (0:8192), 2 the old image was all zeros (ranges = diff with zeros), 3 the old image could
 * not be read (a capture loss; ranges 0:8192). ranges: offset:length runs joined by ';'.
 * Every logged block is 8192 bytes; a call of n blocks logs n lines.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_BYTES 8192
#define MAX_FDS 65536
#define LINE_BYTES (BLOCK_BYTES * 12 + 512)

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef int (*close_fn)(int);

static pread_fn real_pread;
static pwrite_fn real_pwrite;
static close_fn real_close;

/* Per fd: 0 unknown, 1 logged (path in fd_path), 2 not logged. Cleared by close(). */
static unsigned char fd_state[MAX_FDS];
static char *fd_path[MAX_FDS];
static int log_fd = -1;
static pid_t log_pid;
static char line[LINE_BYTES];

static void resolve(void)
{
	if (!real_pread) {
		real_pread = (pread_fn)dlsym(RTLD_NEXT, "pread64");
		real_pwrite = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
		real_close = (close_fn)dlsym(RTLD_NEXT, "close");
	}
}

static long long now_100ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 10000000LL + ts.tv_nsec / 100;
}

/* The path of fd relative to FLASHBUF_IOLOG_ROOT when it is a relation file, else NULL. */
static const char *tracked(int fd)
{
	if (fd < 0 || fd >= MAX_FDS)
		return NULL;
	if (fd_state[fd] == 0) {
		const char *root = getenv("FLASHBUF_IOLOG_ROOT");
		char link[64], target[4096];
		size_t root_len = root ? strlen(root) : 0;
		fd_state[fd] = 2;
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (root && n > (ssize_t)root_len + 1) {
			target[n] = '\0';
			const char *rel = target + root_len + 1;
			if (strncmp(target, root, root_len) == 0 && target[root_len] == '/' &&
			    (strncmp(rel, "base/", 5) == 0 || strncmp(rel, "global/", 7) == 0)) {
				fd_path[fd] = strdup(rel);
				fd_state[fd] = fd_path[fd] ? 1 : 2;
			}
		}
	}
	return fd_state[fd] == 1 ? fd_path[fd] : NULL;
}

static void emit(size_t len)
{
	const char *path = getenv("FLASHBUF_IOLOG");
	if (!path)
		return;
	if (log_fd < 0 || log_pid != getpid()) {
		log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		log_pid = getpid();
	}
	if (log_fd >= 0 && write(log_fd, line, len) < 0)
		log_fd = -1;
}

/* Appends the runs where a and b differ, "o:l;o:l", to out; returns the length written. */
size_t flashbuf_diff_runs(const unsigned char *a, const unsigned char *b, size_t n, char *out,
			  size_t cap)
{
	size_t len = 0, i = 0;
	while (i < n) {
		if (a[i] == b[i]) {
			i++;
			continue;
		}
		size_t start = i;
		while (i < n && a[i] != b[i])
			i++;
		int w = snprintf(out + len, cap - len, "%s%zu:%zu", len ? ";" : "", start, i - start);
		if (w < 0 || (size_t)w >= cap - len)
			break;
		len += (size_t)w;
	}
	return len;
}

static void log_write_block(int fd, const char *rel, const unsigned char *data, off_t off,
			    long long t, long long lat, const unsigned char *old, ssize_t got)
{
	static const unsigned char zeros[BLOCK_BYTES];
	int new_flag = 0;
	int head = snprintf(line, LINE_BYTES, "W,%lld,%lld,%s,%lld,", t, lat, rel, (long long)off);
	size_t len = (size_t)head;
	(void)fd;
	if (got < 0) {
		new_flag = 3;
	} else if (got < BLOCK_BYTES) {
		new_flag = 1;
	} else if (memcmp(old, zeros, BLOCK_BYTES) == 0) {
		new_flag = 2;
	}
	len += (size_t)snprintf(line + len, LINE_BYTES - len, "%d,", new_flag);
	if (new_flag == 1 || new_flag == 3)
		len += (size_t)snprintf(line + len, LINE_BYTES - len, "0:%d", BLOCK_BYTES);
	else
		len += flashbuf_diff_runs(old, data, BLOCK_BYTES, line + len, LINE_BYTES - len - 2);
	line[len++] = '\n';
	emit(len);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset)
{
	resolve();
	const char *rel = tracked(fd);
	if (!rel || count % BLOCK_BYTES != 0 || offset % BLOCK_BYTES != 0)
		return real_pwrite(fd, buf, count, offset);
	size_t blocks = count / BLOCK_BYTES;
	unsigned char *old = malloc(count);
	ssize_t *got = malloc(blocks * sizeof *got);
	if (!old || !got) {
		free(old);
		free(got);
		return real_pwrite(fd, buf, count, offset);
	}
	int saved = errno;
	for (size_t b = 0; b < blocks; b++)
		got[b] = real_pread(fd, old + b * BLOCK_BYTES, BLOCK_BYTES,
				    offset + (off_t)(b * BLOCK_BYTES));
	errno = saved;
	long long t = now_100ns();
	ssize_t done = real_pwrite(fd, buf, count, offset);
	long long lat = now_100ns() - t;
	saved = errno;
	for (size_t b = 0; done > 0 && b < (size_t)done / BLOCK_BYTES; b++)
		log_write_block(fd, rel, (const unsigned char *)buf + b * BLOCK_BYTES,
				offset + (off_t)(b * BLOCK_BYTES), t, lat, old + b * BLOCK_BYTES,
				got[b]);
	free(old);
	free(got);
	errno = saved;
	return done;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
	return pwrite64(fd, buf, count, offset);
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
	resolve();
	const char *rel = tracked(fd);
	long long t = now_100ns();
	ssize_t done = real_pread(fd, buf, count, offset);
	if (!rel || count % BLOCK_BYTES != 0 || offset % BLOCK_BYTES != 0 || done <= 0)
		return done;
	long long lat = now_100ns() - t;
	int saved = errno;
	for (size_t b = 0; b < (size_t)done / BLOCK_BYTES; b++) {
		int len = snprintf(line, LINE_BYTES, "R,%lld,%lld,%s,%lld,,\n", t, lat, rel,
				   (long long)(offset + (off_t)(b * BLOCK_BYTES)));
		emit((size_t)len);
	}
	errno = saved;
	return done;
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	return pread64(fd, buf, count, offset);
}

int close(int fd)
{
	resolve();
	if (fd >= 0 && fd < MAX_FDS) {
		free(fd_path[fd]);
		fd_path[fd] = NULL;
		fd_state[fd] = 0;
	}
	return real_close(fd);
}

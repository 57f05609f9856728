/*
 * A stand-in for libcudart, for testing Stoker's CUDA bindings on a machine without a GPU: the
 * functions Cuda.java binds, with the same signatures, over host memory. "Device" memory is
 * malloc'd; cudaMemcpyAsync queues the copy on its stream, which a thread of the stream's own
 * carries out later (after fake_cuda_delay_us), so a copy really is asynchronous; an event
 * completes when its stream has done the work queued before it. Every allocation is counted, so
 * a test can check that everything was freed.
 *
 * Built by CudaTest: gcc -shared -fPIC -pthread -o libfakecudart.so fake_cudart.c
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int cudaError_t;
enum { OK = 0, INVALID_VALUE = 1, MEMORY = 2, NOT_READY = 600 };

static long live;          /* allocations, streams and events not freed */
static long delay_us = 0;  /* each copy waits this long first */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void counted(long d) {
    pthread_mutex_lock(&count_lock);
    live += d;
    pthread_mutex_unlock(&count_lock);
}

long fake_cuda_live(void) { return live; }
void fake_cuda_delay_us(long us) { delay_us = us; }

struct copy { void *dst; const void *src; size_t n; struct copy *next; };

struct stream {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct copy *head, *tail;
    long queued, done;  /* work items queued and done, in order */
    int stop;
    pthread_t thread;
};

struct event { struct stream *stream; long target; };

static void *run(void *arg) {
    struct stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stop) pthread_cond_wait(&s->cond, &s->lock);
        if (!s->head) break;
        struct copy *c = s->head;
        pthread_mutex_unlock(&s->lock);
        if (delay_us) usleep(delay_us);
        memcpy(c->dst, c->src, c->n);
        pthread_mutex_lock(&s->lock);
        s->head = c->next;
        if (!s->head) s->tail = NULL;
        s->done++;
        free(c);
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return OK; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? OK : INVALID_VALUE; }

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags) {
    (void) flags;
    *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    if (!*p) return MEMORY;
    counted(1);
    return OK;
}
cudaError_t cudaFreeHost(void *p) { free(p); counted(-1); return OK; }
cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags) { (void) p; (void) n; (void) flags; counted(1); return OK; }
cudaError_t cudaHostUnregister(void *p) { (void) p; counted(-1); return OK; }

cudaError_t cudaMalloc(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    if (!*p) return MEMORY;
    counted(1);
    return OK;
}
cudaError_t cudaFree(void *p) { free(p); counted(-1); return OK; }

cudaError_t cudaStreamCreateWithFlags(struct stream **out, unsigned flags) {
    (void) flags;
    struct stream *s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    pthread_create(&s->thread, NULL, run, s);
    *out = s;
    counted(1);
    return OK;
}

cudaError_t cudaStreamDestroy(struct stream *s) {
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    free(s);
    counted(-1);
    return OK;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, struct stream *s) {
    if (kind != 1 || !s) return INVALID_VALUE;
    struct copy *c = malloc(sizeof *c);
    c->dst = dst;
    c->src = src;
    c->n = n;
    c->next = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->tail) s->tail->next = c; else s->head = c;
    s->tail = c;
    s->queued++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return OK;
}

cudaError_t cudaEventCreateWithFlags(struct event **out, unsigned flags) {
    (void) flags;
    *out = calloc(1, sizeof **out);
    counted(1);
    return OK;
}

cudaError_t cudaEventRecord(struct event *e, struct stream *s) {
    pthread_mutex_lock(&s->lock);
    e->stream = s;
    e->target = s->queued;
    pthread_mutex_unlock(&s->lock);
    return OK;
}

cudaError_t cudaEventQuery(struct event *e) {
    struct stream *s = e->stream;
    if (!s) return OK;
    pthread_mutex_lock(&s->lock);
    int done = s->done >= e->target;
    pthread_mutex_unlock(&s->lock);
    return done ? OK : NOT_READY;
}

cudaError_t cudaEventSynchronize(struct event *e) {
    struct stream *s = e->stream;
    if (!s) return OK;
    pthread_mutex_lock(&s->lock);
    while (s->done < e->target) pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
    return OK;
}

cudaError_t cudaEventDestroy(struct event *e) { free(e); counted(-1); return OK; }

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
        case OK: return "no error";
        case INVALID_VALUE: return "invalid argument";
        case MEMORY: return "out of memory";
        case NOT_READY: return "device not ready";
        default: return "unknown error";
    }
}

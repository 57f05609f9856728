/*
 * Decoders for one RandomResizedCrop(224) crop of each JPEG, one thread, files held in memory:
 * how many images a second each way gives (BENCHMARKS.md, "W5"). Run by bench/jpeg-region.sh.
 *   whole     the whole image at the crop's DCT scale (tjDecompress2: Stoker's decoder before regions)
 *   lossless  a lossless crop to the iMCU grid (tjTransform, TJXOPT_CROP), then the crop decoded
 *   region    Stoker's region decoder (stoker_jpeg.c: jpeg_skip_scanlines, jpeg_crop_scanline)
 *   entropy   entropy decoding alone, the whole image (jpeg_read_coefficients): the floor
 * Usage: jpeg_region DIR N   (DIR/00000.jpg .. DIR/<N-1>.jpg)
 */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jpeglib.h>
#include <turbojpeg.h>

void *stoker_jpeg_open(void);
int stoker_jpeg_decode_region(void *, const uint8_t *, size_t, int, int, int, int, int, uint8_t *, size_t, int32_t *,
                              char *);

typedef struct { int x, y, w, h; } crop_t;
static uint64_t state = 88172645463325252ULL;

static double uniform(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (state >> 11) * (1.0 / 9007199254740992.0);
}

/* torchvision's RandomResizedCrop.get_params, scale (0.08, 1), ratio (3/4, 4/3) */
static crop_t random_resized(int W, int H) {
    for (int a = 0; a < 10; a++) {
        double target = (double) W * H * (0.08 + 0.92 * uniform());
        double aspect = exp(log(3.0 / 4) + (log(4.0 / 3) - log(3.0 / 4)) * uniform());
        int w = (int) lround(sqrt(target * aspect)), h = (int) lround(sqrt(target / aspect));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            crop_t c = {(int) (uniform() * (W - w + 1)), (int) (uniform() * (H - h + 1)), w, h};
            return c;
        }
    }
    crop_t c = {0, 0, W, H};
    return c;
}

/* Stoker's rule (Jpeg.eighths) for a subsampled JPEG: 1/2 or whole */
static int eighths(int W, int H, crop_t c) {
    int minW = (int) ceil(W * fmin(1.0, 224.0 / c.w)), minH = (int) ceil(H * fmin(1.0, 224.0 / c.h));
    return (W * 4 + 7) / 8 >= minW && (H * 4 + 7) / 8 >= minH ? 4 : 8;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

struct err { struct jpeg_error_mgr pub; jmp_buf jump; };
static void on_error(j_common_ptr c) { longjmp(((struct err *) c->err)->jump, 1); }

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: jpeg_region DIR N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    unsigned char **files = malloc(n * sizeof *files);
    unsigned long *lens = malloc(n * sizeof *lens);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%05d.jpg", argv[1], i);
        FILE *f = fopen(path, "rb");
        if (f == NULL) {
            perror(path);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        lens[i] = (unsigned long) ftell(f);
        rewind(f);
        files[i] = malloc(lens[i]);
        if (fread(files[i], 1, lens[i], f) != lens[i]) {
            perror(path);
            return 1;
        }
        fclose(f);
    }
    size_t cap = (size_t) 8192 * 8192 * 4;
    unsigned char *out = malloc(cap);
    tjhandle tj = tjInitDecompress(), tx = tjInitTransform();
    void *region = stoker_jpeg_open();
    struct jpeg_decompress_struct ci;
    struct err je;
    ci.err = jpeg_std_error(&je.pub);
    je.pub.error_exit = on_error;
    jpeg_create_decompress(&ci);
    const char *names[] = {"whole", "lossless", "region", "entropy"};
    for (int mode = 0; mode < 4; mode++) {
        state = 88172645463325252ULL; /* the same crops for every decoder */
        double t0 = now();
        for (int i = 0; i < n; i++) {
            int W, H, sub, cs;
            if (tjDecompressHeader3(tj, files[i], lens[i], &W, &H, &sub, &cs) != 0) {
                fprintf(stderr, "%05d.jpg: %s\n", i, tjGetErrorStr2(tj));
                return 1;
            }
            crop_t c = random_resized(W, H);
            int m = eighths(W, H, c);
            if (mode == 0) {
                tjDecompress2(tj, files[i], lens[i], out, (W * m + 7) / 8, 0, (H * m + 7) / 8, TJPF_RGBX, 0);
            } else if (mode == 1) {
                tjtransform t;
                memset(&t, 0, sizeof t);
                t.op = TJXOP_NONE;
                t.options = TJXOPT_CROP;
                t.r.x = c.x / 16 * 16;
                t.r.y = c.y / 16 * 16;
                t.r.w = c.x + c.w - t.r.x;
                t.r.h = c.y + c.h - t.r.y;
                unsigned char *cropped = NULL;
                unsigned long len = 0;
                if (tjTransform(tx, files[i], lens[i], 1, &cropped, &len, &t, 0) != 0) {
                    fprintf(stderr, "%05d.jpg: %s\n", i, tjGetErrorStr2(tx));
                    return 1;
                }
                tjDecompress2(tj, cropped, len, out, (t.r.w * m + 7) / 8, 0, (t.r.h * m + 7) / 8, TJPF_RGBX, 0);
                tjFree(cropped);
            } else if (mode == 2) {
                int sw = (W * m + 7) / 8, sh = (H * m + 7) / 8;
                int x0 = c.x * m / 8, y0 = c.y * m / 8;
                int x1 = (int) ceil((c.x + c.w) * m / 8.0), y1 = (int) ceil((c.y + c.h) * m / 8.0);
                x0 = x0 > 0 ? x0 - 1 : 0; /* one pixel past the crop, as Jpeg.decodeCrop asks */
                y0 = y0 > 0 ? y0 - 1 : 0;
                x1 = x1 < sw ? x1 + 1 : sw;
                y1 = y1 < sh ? y1 + 1 : sh;
                int32_t geom[4];
                char message[200];
                if (stoker_jpeg_decode_region(region, files[i], lens[i], m, x0, y0, x1 - x0, y1 - y0, out, cap, geom,
                                              message) != 0) {
                    fprintf(stderr, "%05d.jpg: %s\n", i, message);
                    return 1;
                }
            } else {
                if (setjmp(je.jump)) {
                    fprintf(stderr, "%05d.jpg: cannot read\n", i);
                    return 1;
                }
                jpeg_mem_src(&ci, files[i], lens[i]);
                jpeg_read_header(&ci, TRUE);
                jpeg_read_coefficients(&ci);
                jpeg_abort_decompress(&ci);
            }
        }
        printf("%-9s %6.0f images/s\n", names[mode], n / (now() - t0));
    }
    return 0;
}

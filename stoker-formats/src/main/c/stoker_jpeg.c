/*
 * Region-of-interest JPEG decoding for Stoker, through libjpeg-turbo's libjpeg API
 * (jpeg_crop_scanline, jpeg_skip_scanlines), which the TurboJPEG 2.x API Debian ships does not
 * reach. libjpeg reports a fatal error by calling error_exit, which must not return: that needs
 * setjmp/longjmp in a C frame, which is why this file exists rather than FFM calls into libjpeg.
 * Called from dev.stoker.formats.image.Jpeg through FFM; one handle per thread at a time.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

#define MESSAGE_BYTES 200

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int warned;
    char message[MESSAGE_BYTES];
} errors;

typedef struct {
    struct jpeg_decompress_struct cinfo;
    errors err;
} handle;

static void on_error(j_common_ptr c) {
    errors *e = (errors *) c->err;
    (*c->err->format_message)(c, e->message);
    longjmp(e->jump, 1);
}

static void on_message(j_common_ptr c, int level) {
    errors *e = (errors *) c->err;
    if (level < 0 && !e->warned) { /* a warning: damaged data (truncated, a bad Huffman code...) */
        e->warned = 1;
        (*c->err->format_message)(c, e->message);
    }
}

void *stoker_jpeg_open(void) {
    handle *volatile h = calloc(1, sizeof(handle));
    if (h == NULL) {
        return NULL;
    }
    h->cinfo.err = jpeg_std_error(&h->err.pub);
    h->err.pub.error_exit = on_error;
    h->err.pub.emit_message = on_message;
    if (setjmp(h->err.jump)) {
        free(h);
        return NULL;
    }
    jpeg_create_decompress(&h->cinfo);
    return h;
}

void stoker_jpeg_close(void *p) {
    handle *h = p;
    if (h != NULL) {
        jpeg_destroy_decompress(&h->cinfo);
        free(h);
    }
}

/* The last EOI marker (FF D9) at or after `from`: a stream cut short has none. */
static int ends_whole(const uint8_t *src, size_t len, size_t from) {
    for (size_t i = len; i >= from + 2; i--) {
        if (src[i - 2] == 0xFF && src[i - 1] == 0xD9) {
            return 1;
        }
    }
    return 0;
}

/*
 * Decodes rows [y, y + h) and at least columns [x, x + w) of the image scaled by scale/8, as
 * RGBX, into out (capacity cap bytes), rows packed at the decoded width. geom receives the
 * decoded region: x (the column it starts at, x rounded down to an iMCU column), y, width, height.
 * Returns 0 when decoded; 1 when out is too small (geom says how much is needed; nothing decoded);
 * 2 when the image's colour space is not one this decodes to RGB (CMYK, YCCK: the caller decodes
 * it otherwise); -1 on a fatal error and -2 on damaged data, with a message in message.
 */
int stoker_jpeg_decode_region(void *p, const uint8_t *src, size_t len, int scale, int x, int y, int w, int h,
                              uint8_t *out, size_t cap, int32_t *geom, char *message) {
    handle *hd = p;
    struct jpeg_decompress_struct *c = &hd->cinfo;
    hd->err.warned = 0;
    if (setjmp(hd->err.jump)) {
        jpeg_abort_decompress(c);
        memcpy(message, hd->err.message, MESSAGE_BYTES);
        return -1;
    }
    jpeg_mem_src(c, src, (unsigned long) len);
    jpeg_read_header(c, TRUE);
    if (c->jpeg_color_space != JCS_YCbCr && c->jpeg_color_space != JCS_GRAYSCALE && c->jpeg_color_space != JCS_RGB) {
        jpeg_abort_decompress(c);
        return 2;
    }
    c->scale_num = (unsigned int) scale;
    c->scale_denom = 8;
    c->out_color_space = JCS_EXT_RGBX;
    jpeg_start_decompress(c);
    if (x < 0 || y < 0 || w < 1 || h < 1 || (JDIMENSION) (x + w) > c->output_width
            || (JDIMENSION) (y + h) > c->output_height) {
        snprintf(message, MESSAGE_BYTES, "region %d,%d %dx%d outside the %ux%u image", x, y, w, h,
                 c->output_width, c->output_height);
        jpeg_abort_decompress(c);
        return -1;
    }
    JDIMENSION xo = (JDIMENSION) x;
    JDIMENSION wd = (JDIMENSION) w;
    if (xo > 0 || wd < c->output_width) {
        jpeg_crop_scanline(c, &xo, &wd);
    }
    geom[0] = (int32_t) xo;
    geom[1] = y;
    geom[2] = (int32_t) wd;
    geom[3] = h;
    if ((size_t) wd * 4 * (size_t) h > cap) {
        jpeg_abort_decompress(c);
        return 1;
    }
    if (y > 0) {
        jpeg_skip_scanlines(c, (JDIMENSION) y);
    }
    while (c->output_scanline < (JDIMENSION) (y + h)) {
        JSAMPROW row = out + (size_t) (c->output_scanline - y) * wd * 4;
        jpeg_read_scanlines(c, &row, 1);
    }
    /* the rows below are not decoded; a stream cut short is damaged wherever it stops, as it is
       when decoded whole, so it is refused whatever the region */
    /* the entropy decoder reads ahead, and may have taken the marker itself */
    size_t read = (size_t) (c->src->next_input_byte - src);
    read = read >= 2 ? read - 2 : 0;
    int cut = c->output_scanline < c->output_height && !ends_whole(src, len, read);
    jpeg_abort_decompress(c);
    if (hd->err.warned) {
        memcpy(message, hd->err.message, MESSAGE_BYTES);
        return -2;
    }
    if (cut) {
        snprintf(message, MESSAGE_BYTES, "Premature end of JPEG file (no end-of-image marker after byte %zu)", read);
        return -2;
    }
    return 0;
}

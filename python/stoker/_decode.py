"""Images decoded where the batch goes: ``stoker.Loader(..., decode_on="cuda")`` (DALI's "mixed" decode).

The server's workers do not decode: each batch carries every image's JPEG bytes as they are in
the shard (``jpeg``), with the crop (``crop``: x, y, width, height, in the image's pixels) and
flip (``flip``) that the decoding pipeline would have drawn for it, from the same seeds
(``ImagePipeline.Encoded``). Here, on a thread of its own a few batches ahead of the loop (the
loader's ``map`` thread), ``torchvision.io.decode_jpeg`` decodes the batch on the GPU (nvJPEG; a
list at once where torchvision takes one, since 0.19), and each image is cropped, resized
(bilinear, antialiased, rounded to uint8, as torchvision's tensor transforms do) and flipped there
with plain torch operations, then normalized as the ``image_dtype`` asks. The GPU work runs on a side
stream; the batch is handed to the loop only once it is done, and its tensors are marked as used
by the loop's stream, so the caching allocator does not hand their memory out while the loop
still reads them.

``decode_on="torchvision"`` runs the same steps on the CPU (libjpeg through torchvision): the
check of this path on a machine without a GPU, and a way to compare with the workers' decode.
"""

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

#: The batch fields an encoded batch carries in place of ``image`` (ImagePipeline's).
ENCODED = ("jpeg", "crop", "flip")


def target(value, torch):
    """Where ``decode_on=value`` decodes: None for the server's workers, else a torch device."""
    if value is None or value == "cpu":
        return None
    if value == "torchvision":
        return torch.device("cpu")
    return torch.device(value)


class JpegDecoder:
    """A function from an encoded host batch to a decoded batch on ``device``."""

    def __init__(self, torch, device, images):
        try:
            import torchvision.io
        except ImportError as e:
            raise ImportError("stoker.Loader(decode_on=...) decodes with torchvision, which is not importable "
                              f"({e}): install torchvision (pip install torchvision, or apt install python3-torchvision)"
                              ) from e
        self.torch = torch
        self.device = device
        self.io = torchvision.io
        self.batched = None  # whether decode_jpeg takes a list: found at the first batch
        self.size = int(images.get("size", 224))
        self.train = not images.get("transform", "train").startswith("eval")
        self.resize = int(images.get("resize", self.size * 8 // 7))
        self.uint8 = images.get("image_dtype", "float32") == "uint8"
        cuda = device.type == "cuda"
        self.side = torch.cuda.Stream(device=device) if cuda else None
        self.mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1)
        self.std = torch.tensor(STD, device=device).view(1, 3, 1, 1)

    def __call__(self, batch):
        torch = self.torch
        if self.side is None:
            return self._decode(batch)
        with torch.cuda.stream(self.side):
            out = self._decode(batch)
        self.side.synchronize()  # done before the loop sees it; the host batch (the JPEGs) may then go back
        loop = torch.cuda.default_stream(self.device)
        for v in out.values():
            if isinstance(v, torch.Tensor) and v.device.type == "cuda":
                v.record_stream(loop)
        return out

    def _decode(self, batch):
        torch = self.torch
        offsets, data = batch["jpeg"]
        o = offsets.tolist()
        n = len(o) - 1
        jpegs = [data[o[i]:o[i + 1]] for i in range(n)]
        crops = batch["crop"].tolist()
        flips = batch["flip"].tolist()
        images = self._decode_all(jpegs) if n else []
        out = torch.empty((n, 3, self.size, self.size), dtype=torch.uint8, device=self.device)
        for i, img in enumerate(images):
            out[i] = self._crop(img, crops[i], flips[i])
        result = {}
        for name, value in batch.items():
            if name in ENCODED:
                continue
            if isinstance(value, torch.Tensor):
                value = value.to(self.device, non_blocking=True)
            result[name] = value
        if self.uint8:
            image = out
        else:
            image = out.float().div_(255).sub_(self.mean).div_(self.std)
        return dict(image=image, **result)

    def _decode_all(self, jpegs):
        rgb = self.io.ImageReadMode.RGB
        if self.batched is not False:
            try:
                images = self.io.decode_jpeg(jpegs, mode=rgb, device=self.device)
                self.batched = True
                return images
            except (TypeError, RuntimeError, ValueError):
                if self.batched:
                    raise
                self.batched = False  # an older torchvision: one image at a time
        return [self.io.decode_jpeg(j, mode=rgb, device=self.device) for j in jpegs]

    def _crop(self, img, crop, flip):
        """torchvision's RandomResizedCrop (the crop given) or Resize + CenterCrop, then the flip."""
        _, h, w = img.shape
        if self.train:
            x, y, cw, ch = (int(round(v)) for v in crop)
            img = _resize(self.torch, img[:, y:y + ch, x:x + cw], self.size, self.size)
        else:
            # Resize(resize): the shorter side to resize, the longer in proportion (truncated)
            if w <= h:
                rw, rh = self.resize, int(self.resize * h / w)
            else:
                rw, rh = int(self.resize * w / h), self.resize
            img = _resize(self.torch, img, rh, rw)
            top, left = int(round((rh - self.size) / 2.0)), int(round((rw - self.size) / 2.0))
            img = img[:, top:top + self.size, left:left + self.size]
        return img.flip(-1) if flip else img


def _resize(torch, img, h, w):
    """uint8 CHW resized to h × w: bilinear with antialiasing, rounded, as torchvision's tensor resize."""
    if img.shape[1] == h and img.shape[2] == w:
        return img
    out = torch.nn.functional.interpolate(img[None].float(), size=(h, w), mode="bilinear", align_corners=False,
                                          antialias=True)
    return out[0].round_().clamp_(0, 255).to(torch.uint8)

/**
 * Token data for language models: read, windowed, packed, and prepared from text.
 *
 * <p>A tour. {@link dev.stoker.formats.tokens.Tokens} is a flat array of token ids in memory: a raw
 * {@link dev.stoker.formats.tokens.TokenFile} (nanoGPT's {@code train.bin}), a numpy array
 * ({@link dev.stoker.formats.tokens.Tokens#of}), or a {@link dev.stoker.formats.tokens.Megatron}
 * indexed dataset. {@link dev.stoker.formats.tokens.TokenWindows} serves fixed-length {@code x, y}
 * windows of one, and {@link dev.stoker.formats.tokens.PackedSequences} packs Megatron documents into
 * fixed-length samples. Text is tokenized and packed as it streams by two stages over a
 * {@link dev.stoker.formats.text.TextStream}: {@link dev.stoker.formats.tokens.Tokenize} (a
 * document's {@link dev.stoker.formats.tokens.Tokenized} ids) and
 * {@link dev.stoker.formats.tokens.Pack} (windows of a fixed length, an end-of-text id after each
 * document). {@link dev.stoker.formats.io.TokenPreparer} tokenizes a corpus once, in parallel,
 * into a token file, an {@code .npy} or a Megatron dataset ({@link
 * dev.stoker.formats.tokens.MegatronWriter}), with the {@link dev.stoker.formats.tokens.Tokenizer}
 * (tiktoken's encodings through JTokkit).
 */
package dev.stoker.formats.tokens;

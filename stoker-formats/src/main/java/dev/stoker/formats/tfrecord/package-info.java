/**
 * TFRecord files (plain, GZIP, ZLIB), read by index ({@link dev.stoker.formats.tfrecord.TfRecordFile},
 * NOTE [TFRecord]), and the {@code tf.train.Example} and {@code SequenceExample} messages their
 * records hold ({@link dev.stoker.formats.tfrecord.TfRecordFile.Decode}).
 */
package dev.stoker.formats.tfrecord;

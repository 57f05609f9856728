package dev.stoker.formats.records;

/** A value that is a JSON document, kept as its text (an MDS {@code json} column). */
public record JsonText(String text) {
}

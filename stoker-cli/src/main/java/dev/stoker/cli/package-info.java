/**
 * The {@code stoker} command ({@code CLI.md} is its contract). {@link dev.stoker.cli.Main} parses
 * the command line and maps every failure to one line and an exit code; each command is a class of
 * its own ({@code DemoCommand}, {@code BenchCommand} with its {@code BenchRunner}, {@code
 * InspectCommand}, {@code LsCommand}, {@code PrepareCommand}, {@code StageCommand}, {@code
 * EstimateCommand}, {@code ServeCommand}). {@code BridgeSession} and {@code ShmRing} serve batches
 * to the Python package through shared memory; {@code TarSummary} and {@code JsonlSummary} are the
 * reports behind {@code ls} and {@code inspect}.
 */
package dev.stoker.cli;

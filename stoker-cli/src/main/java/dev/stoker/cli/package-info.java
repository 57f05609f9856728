/**
 * The {@code stoker} command. {@link dev.stoker.cli.Main} parses
 * the command line and maps every failure to one line and an exit code; each command is a class of
 * its own ({@code DemoCommand}, {@code BenchCommand} with its {@code BenchRunner}, {@code
 * InspectCommand}, {@code LsCommand}, {@code PrepareCommand}, {@code StageCommand}, {@code
 * EstimateCommand}, {@code ServeCommand}, a thin command over {@code stoker-bridge}'s server whose
 * sources are {@code stoker bench}'s); {@code TarSummary} and {@code JsonlSummary} are the
 * reports behind {@code ls} and {@code inspect}.
 */
package dev.stoker.cli;

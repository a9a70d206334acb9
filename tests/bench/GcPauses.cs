/*
 * GcPauses - a startup hook that measures the GC pauses of any .NET
 * program, one we did not write included (Roslyn's csc.dll), for the
 * pause benchmark (bench-clr-pauses.sh):
 *
 *   DOTNET_STARTUP_HOOKS=/path/GcPauses.dll HT_GC_PAUSES=FILE dotnet app.dll
 *
 * An EventListener takes the runtime's own GC events (keyword GC,
 * informational): a pause runs from GCSuspendEEBegin to GCRestartEEEnd.
 * When the process exits it appends to FILE one line
 *
 *   gcs N pause_ms TOTAL seen M p50 P50 p90 P90 p99 P99 max MAX
 *
 * N and TOTAL are the runtime's own counts (GC.CollectionCount(0),
 * GC.GetTotalPauseDuration()), the percentiles in ms over the M pauses
 * the events gave (they come through a buffer: the last may be missing).
 */
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Diagnostics.Tracing;
using System.Threading;

sealed class PauseListener : EventListener {
	public readonly List<double> Pauses = new List<double>();
	DateTime suspended;

	protected override void OnEventSourceCreated(EventSource source) {
		if (source.Name == "Microsoft-Windows-DotNETRuntime")
			EnableEvents(source, EventLevel.Informational,
				     (EventKeywords)1);
	}

	protected override void OnEventWritten(EventWrittenEventArgs e) {
		if (e.EventName == null)
			return;
		if (e.EventName.StartsWith("GCSuspendEEBegin", StringComparison.Ordinal)) {
			suspended = e.TimeStamp;
		} else if (e.EventName.StartsWith("GCRestartEEEnd", StringComparison.Ordinal) &&
			   suspended != default(DateTime)) {
			lock (Pauses)
				Pauses.Add((e.TimeStamp - suspended).TotalMilliseconds);
			suspended = default(DateTime);
		}
	}
}

internal static class StartupHook {
	static PauseListener listener;

	public static void Initialize() {
		string file = Environment.GetEnvironmentVariable("HT_GC_PAUSES");

		if (string.IsNullOrEmpty(file))
			return;
		listener = new PauseListener();
		AppDomain.CurrentDomain.ProcessExit += (s, e) => Report(file);
	}

	static double Percentile(List<double> sorted, double q) {
		if (sorted.Count == 0)
			return 0;
		int i = (int)Math.Ceiling(q * sorted.Count) - 1;
		return sorted[Math.Max(0, Math.Min(sorted.Count - 1, i))];
	}

	static void Report(string file) {
		List<double> sorted;
		int gcs = GC.CollectionCount(0);
		double total = GC.GetTotalPauseDuration().TotalMilliseconds;

		/* the events come through the runtime's buffers: a moment for
		 * the last ones */
		for (int i = 0; i < 50; i++) {
			lock (listener.Pauses)
				if (listener.Pauses.Count >= gcs)
					break;
			Thread.Sleep(10);
		}
		lock (listener.Pauses)
			sorted = new List<double>(listener.Pauses);
		sorted.Sort();
		var c = CultureInfo.InvariantCulture;
		string line = string.Format(c,
			"gcs {0} pause_ms {1:F1} seen {2} p50 {3:F2} p90 {4:F2} p99 {5:F2} max {6:F2}\n",
			gcs, total, sorted.Count,
			Percentile(sorted, 0.5), Percentile(sorted, 0.9),
			Percentile(sorted, 0.99),
			sorted.Count > 0 ? sorted[sorted.Count - 1] : 0);
		File.AppendAllText(file, line);
	}
}

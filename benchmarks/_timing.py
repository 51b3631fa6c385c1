"""Timing helper shared by the benchmark scripts (run them from the repository root)."""

import statistics
import time


def median_fit_time(make, X, y, repeats: int):
    """Median wall time of ``make(i).fit(X, y)`` over ``repeats`` fresh models; also the last model."""
    times = []
    model = None
    for i in range(repeats):
        model = make(i)
        start = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - start)
    return statistics.median(times), model

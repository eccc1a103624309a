"""The public training corpus of the median family: generated, small, offline."""

from __future__ import annotations

from tests.checklist_family.task import MedianTask


def median_corpus() -> list[MedianTask]:
    """Eight tasks in four groups (the leave-one-dataset-out unit): small and large inputs on
    small and large domains, narrow and wide spreads."""
    settings = [(80, 16, 0.5, 0.1), (80, 256, 0.4, 0.3), (2000, 16, 0.3, 0.2), (2000, 256, 0.6, 0.05),
                (300, 64, 0.5, 0.2), (300, 1024, 0.5, 0.02), (5000, 64, 0.2, 0.1), (5000, 1024, 0.7, 0.3)]
    return [MedianTask(f"median:{index}", f"median-group:{index // 2}", n, domain, centre, spread)
            for index, (n, domain, centre, spread) in enumerate(settings)]

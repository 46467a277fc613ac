"""The budget explorer widget: sliders drive a live projection, shown through widget values."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from .budget_view import (
    Budget,
    BudgetModel,
    Projection,
    bars_html,
    deduction_html,
    kept_ids_text,
    stop_note,
    summary_text,
)
from .notebook import Implementation
from .scale import generated_session_json
from .views import TONE_COLOURS, esc
from .walk_compaction import resumed_path


@dataclass(frozen=True)
class Limits:
    """The largest value each slider offers."""

    max_tokens: int = 100
    reserved_output: int = 20
    safety_margin: int = 20
    system_cost: int = 20


class BudgetExplorer:
    """Four sliders over one path; every change rebuilds the context and updates the views.

    The views are widget values, so they can be read back as well as seen:
    ``table`` and ``bars`` (HTML), ``kept`` and ``reason`` (labels) and ``note`` (HTML, for
    why the selection stopped or what went wrong). ``summary()`` is the same in plain text.
    """

    def __init__(
        self,
        model: BudgetModel,
        *,
        budget: Budget | None = None,
        limits: Limits | None = None,
        title: str = "",
        continuous_update: bool = True,
    ) -> None:
        self.model = model
        budget = budget or Budget()
        limits = limits or Limits()

        def slider(description: str, value: float, top: int) -> widgets.IntSlider:
            return widgets.IntSlider(
                value=int(value),
                min=0,
                max=max(top, int(value)),
                description=description,
                continuous_update=continuous_update,
                style={"description_width": "9em"},
                layout=widgets.Layout(width="26em"),
            )

        self.max_tokens = slider("max_tokens", budget.max_tokens, limits.max_tokens)
        self.system_cost = slider("system prompt", budget.system_cost, limits.system_cost)
        self.reserved_output = slider(
            "reserved_output", budget.reserved_output, limits.reserved_output
        )
        self.safety_margin = slider("safety_margin", budget.safety_margin, limits.safety_margin)
        self.table = widgets.HTML(layout=widgets.Layout(margin="0 2em 0 0"))
        self.bars = widgets.HTML()
        self.kept = widgets.Label()
        self.reason = widgets.Label()
        self.note = widgets.HTML()
        self.title = widgets.HTML(f"<b>{esc(title)}</b>" if title else "")
        self.projection: Projection = Projection(budget)
        for control in self.sliders:
            control.observe(self._on_change, names="value")
        self.widget = widgets.VBox(
            [
                self.title,
                widgets.HBox(
                    [
                        widgets.VBox([self.max_tokens, self.system_cost]),
                        widgets.VBox([self.reserved_output, self.safety_margin]),
                    ]
                ),
                widgets.HBox([self.table, self.bars]),
                _captioned("kept", self.kept),
                _captioned("reason", self.reason),
                self.note,
            ]
        )
        self.refresh()

    @property
    def sliders(self) -> tuple[widgets.IntSlider, ...]:
        return (self.max_tokens, self.system_cost, self.reserved_output, self.safety_margin)

    @property
    def budget(self) -> Budget:
        """The budget the sliders currently describe."""
        return Budget(
            max_tokens=self.max_tokens.value,
            reserved_output=self.reserved_output.value,
            safety_margin=self.safety_margin.value,
            system_cost=self.system_cost.value,
        )

    def _on_change(self, change: dict[str, Any]) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the projection for the sliders' budget and write it into the views."""
        projection = self.model.project(self.budget)
        self.projection = projection
        self.table.value = deduction_html(projection)
        self.bars.value = bars_html(projection)
        if projection.ok:
            self.kept.value = kept_ids_text(projection.kept_ids)
            self.reason.value = projection.reason
            note = stop_note(projection)
            self.note.value = f"<i>{esc(note)}</i>" if note else ""
        else:
            self.kept.value = "—"
            self.reason.value = "—"
            colour = TONE_COLOURS["pending" if projection.pending else "error"]
            self.note.value = (
                f"<div style='color:{colour}'><b>{'…' if projection.pending else '✗'}</b> "
                f"{esc(projection.problem)}</div>"
            )

    def summary(self) -> str:
        """The current projection in plain text."""
        return summary_text(self.projection)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.summary()
        return bundle


def _captioned(caption: str, label: widgets.Label) -> widgets.HBox:
    """A label with a bold caption in front; the label's value stays just the data."""
    title = widgets.HTML(f"<b>{esc(caption)}</b>", layout=widgets.Layout(width="4.5em"))
    return widgets.HBox([title, label])


# --------------------------------------------------------------------------- ready-made explorers


def chapter_explorer(impl: Implementation, *, max_tokens: int = 31) -> BudgetExplorer:
    """The nine entries under the chapter's budget (31 by default)."""
    model = BudgetModel(impl.chapter_path, impl.estimator(), impl.context)
    return BudgetExplorer(
        model, budget=Budget(max_tokens=max_tokens), title="Budget explorer · the nine entries"
    )


def resumed_explorer(impl: Implementation, *, max_tokens: int = 42) -> BudgetExplorer:
    """u1 … a3 → compact-1 → u4 → a4: the summary's cost comes off first."""
    model = BudgetModel(lambda: resumed_path(impl), impl.estimator(), impl.context)
    return BudgetExplorer(
        model,
        budget=Budget(max_tokens=max_tokens),
        title="Budget explorer · resumed from compact-1",
    )


def scale_explorer(
    impl: Implementation, *, groups: int = 300, seed: int = 11, share: float = 0.2
) -> BudgetExplorer:
    """A generated session of ``groups`` interactions; starts with about ``share`` of it."""
    values = generated_session_json(groups, seed=seed)
    model = BudgetModel(lambda: impl.parse(values), impl.estimator(), impl.context)
    total = sum(model.costs) if model.costs else 1000.0
    fixed = Budget()
    overhead = fixed.system_cost + fixed.reserved_output + fixed.safety_margin
    start = math.ceil(total * share + overhead)
    return BudgetExplorer(
        model,
        budget=Budget(start, fixed.reserved_output, fixed.safety_margin, fixed.system_cost),
        limits=Limits(
            max_tokens=_round_up(total + 100, 100),
            reserved_output=500,
            safety_margin=200,
            system_cost=500,
        ),
        title=f"Budget explorer · a generated session of {groups} interactions (seed {seed})",
        continuous_update=False,
    )


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def explorer_for(
    path: Sequence[Any] | Callable[[], Sequence[Any]],
    impl: Implementation,
    **options: Any,
) -> BudgetExplorer:
    """An explorer over any path the notebook built, with the chapter's estimator."""
    return BudgetExplorer(BudgetModel(path, impl.estimator(), impl.context), **options)

"""The predictor-corrector loop of every continuation, run serially or many paths at once.

:func:`follow` is the one loop. A *stepper* (the problem: what a point is, how it is
predicted, corrected and judged) supplies three operations,

``attempt(state, h, rejects) -> Attempt``
    predict a point ``h`` along the path from ``state``, correct it, judge it;
``accepted(state, attempt, h_next) -> new state | Stop``
    record the accepted point (tangents, events, checkpoints) and go on or stop;
``failed(state, error) -> result``
    what the path returns (or raises) when a step fails at the smallest length,

and a :class:`~fluidnet.continuation.controller.StepController` decides from each
:class:`~fluidnet.continuation.controller.Attempt` whether the step is accepted and how long
the next one is.

The loop is a generator: whenever a stepper needs something evaluated that a batch could do
better (a Newton correction of characteristic roots, a count of right-half-plane roots), it
``yield``\\ s a *request* and receives the answer. :func:`run` drives one path, answering each
request at once; :func:`run_batch` drives many paths together, answering every pending request
of a round in one call (stacked systems, one vectorized computation). A stepper whose
operations are plain functions (no request) runs under :func:`run` without an evaluator. The
batched mode is therefore not a second copy of the loop: it is the same generator, driven
differently.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from .controller import Attempt, StepController, StepSizeError

__all__ = ["Stop", "follow", "run", "run_batch", "call"]


class Stop:
    """Returned by a stepper's ``accepted`` to end the path with ``result``."""

    __slots__ = ("result",)

    def __init__(self, result: Any):
        self.result = result


def call(value):
    """``yield from call(x)``: delegate to ``x`` when it is a generator, else return it.

    Lets stepper operations be plain functions or generators (that make requests).
    """
    if isinstance(value, types.GeneratorType):
        return (yield from value)
    return value


def follow(
    stepper,
    state: Any,
    controller: StepController,
    h: float,
    *,
    max_steps: int | None = None,
):
    """The predictor-corrector loop from ``state`` with first step ``h`` (a generator).

    Yields the stepper's requests; returns the path's result: the ``Stop`` result of
    ``stepper.accepted``, ``stepper.failed(state, error)`` when the controller gives up, or
    ``stepper.finish(state)`` after ``max_steps`` accepted steps.
    """
    steps = 0
    while True:
        if max_steps is not None and steps >= max_steps:
            return (yield from call(stepper.finish(state)))
        attempt: Attempt = yield from call(stepper.attempt(state, h, controller.rejects))
        if isinstance(attempt, Stop):
            return attempt.result
        if attempt.restart is not None:
            state = attempt.restart
            controller.reset()
            if not math.isnan(attempt.h):
                h = attempt.h
            continue
        used = attempt.h if not math.isnan(attempt.h) else h
        try:
            ok, h_next = controller.adapt(used, attempt)
        except StepSizeError as exc:
            return (yield from call(stepper.failed(state, exc)))
        if not ok:
            h = h_next
            continue
        steps += 1
        outcome = yield from call(stepper.accepted(state, attempt, h_next))
        if isinstance(outcome, Stop):
            return outcome.result
        state = outcome
        h = h_next


def run(path, answer: Callable[[Any], Any] | None = None):
    """Drive one continuation generator to its end, answering each request with
    ``answer(request)``; returns the path's result."""
    try:
        request = next(path)
        while True:
            if answer is None:
                raise RuntimeError(f"the continuation requested {request!r} with no evaluator")
            request = path.send(answer(request))
    except StopIteration as stop:
        return stop.value


def run_batch(
    paths: Mapping[Hashable, Any],
    answer_round: Callable[[dict], dict],
    failures: tuple[type[BaseException], ...] = (),
) -> tuple[dict, dict]:
    """Drive many continuation generators together.

    At every round, the pending request of every live path is passed to
    ``answer_round({key: request}) -> {key: reply}`` (one batched computation); a key missing
    from the replies leaves the batch (its path is dropped).

    Returns
    -------
    results : dict
        ``{key: result}`` of the paths that ended.
    errors : dict
        ``{key: exception}`` of the paths that raised one of ``failures``.
    """
    results: dict = {}
    errors: dict = {}
    pending: dict = {}
    for key, path in paths.items():
        try:
            pending[key] = next(path)
        except StopIteration as stop:
            results[key] = stop.value
        except failures as exc:
            errors[key] = exc
    while pending:
        replies = answer_round(dict(pending))
        nxt = {}
        for key in pending:
            if key not in replies:
                continue
            try:
                nxt[key] = paths[key].send(replies[key])
            except StopIteration as stop:
                results[key] = stop.value
            except failures as exc:
                errors[key] = exc
        pending = nxt
    return results, errors

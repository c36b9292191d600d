"""Codes shared by the compiled integrator: failure causes, flag and counter slots, events."""

from __future__ import annotations

import numpy as np

# failure causes (fl[FL_CAUSE], and the status the integrator returns)
ST_OK = 0
ST_UNDERFLOW = 1
ST_NONFINITE = 2
ST_NEG_DELAY = 3
ST_HIST_RANGE = 4
ST_MAX_STEPS = 5
ST_NONFINITE_DELAY = 6
ST_ZENO = 7
ST_ITERATION = 8

# slots of the integer flag array ``fl``
FL_FUTURE = 0  # a lookup went beyond the stored history (into the step being attempted)
FL_CAUSE = 1  # failure cause of the current evaluation
FL_INDEX = 2  # index (state or lag) the failure refers to

# slots of the counter array ``cnt``
C_STEPS = 0
C_REJECT = 1
C_FEV = 2
C_DISC = 3
C_EVENTS = 4
C_ITER = 5
C_SLIDE = 6

# the generated functions, in the order of their addresses
FN_RHS = 0
FN_DELAY = 1
FN_SWITCH = 2
FN_SGRAD = 3

# events located on the dense output of a step
EV_NONE = 0
EV_ARRIVE = 1  # a projected state reaches 0
EV_DEPART = 2  # a held state's unprojected derivative turns positive
EV_SWITCH = 3  # a switching function changes sign
EV_SLIDE_LO = 4  # a sliding weight falls below 0
EV_SLIDE_HI = 5  # a sliding weight exceeds 1
EV_REDECIDE = 6  # a step started on the wrong side of a surface: decide the mode again
EV_SDEP = 7  # a state-dependent lag argument reaches a discontinuity point
# event codes as run-time values: literal arguments would compile one copy of a callee per code
EVT = np.arange(8, dtype=np.int64)

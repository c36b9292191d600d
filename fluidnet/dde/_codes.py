"""Named codes shared by the compiled integrator and its Python driver.

The integrator's C code declares the same values (``fluidnet/dde/src/kernel.h``); the module
lists them (``CODES``) and :func:`fluidnet.dde.engine.integrator` checks that they agree.
"""

from __future__ import annotations

# Outcome of a call of the kernel, and failure causes (``RunState.status``, ``RunState.cause``)
ST_OK = 0  # finished at t_end
ST_UNDERFLOW = 1
ST_NONFINITE = 2
ST_NEG_DELAY = 3
ST_HIST_RANGE = 4
ST_MAX_STEPS = 5
ST_NONFINITE_DELAY = 6
ST_ZENO = 7
ST_ITERATION = 8
ST_DROPPED = 9  # a lag reached history discarded by ``dense=False``
ST_PAUSED = 10  # the work budget of this call is spent: call again to continue
ST_NEED_SPACE = 11  # the mesh or the discontinuity lists are full: enlarge, then call again
ST_NO_SLIDING = 12  # no Filippov weights in [0, 1] keep the solution on the sliding surfaces
ST_TOO_MANY_SURFACES = 13  # sliding on more surfaces at once than the kernel holds (10)

# events located on the dense output of a step
EV_NONE = 0
EV_ARRIVE = 1  # a projected state reaches 0
EV_DEPART = 2  # a held state's unprojected derivative turns positive
EV_SWITCH = 3  # a switching function changes sign
EV_SLIDE_LO = 4  # a sliding weight falls below 0
EV_SLIDE_HI = 5  # a sliding weight exceeds 1
EV_REDECIDE = 6  # a step started on the wrong side of a surface: decide the mode again
EV_SDEP = 7  # a state-dependent lag argument reaches a discontinuity point

# what the state-dependent crossing phase asks of the driver
SD_NONE = 0  # no crossing in the step
SD_REDO = 1  # redo the step, shortened to end on the crossing
SD_AT_START = 2  # the crossing is at the step's start: recorded, take the step again
SD_LAND = 3  # the step ends on the crossing: record it after the step

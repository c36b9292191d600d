# The public names of fluidnet.explore (read by type checkers and by fluidnet._lazy).

# bound eagerly by __init__.py
from .launch import explore as explore

from .explorer import Explorer as Explorer
from .point import Snapshot as Snapshot
from .point import snapshot as snapshot
from .sliders import SliderSpec as SliderSpec
from .sliders import slider_specs as slider_specs

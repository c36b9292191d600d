# The public names of fluidnet.codegen: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

from .compiled import CompiledModel as CompiledModel
from .compiled import compile_form as compile_form
from .compiled import compile_model as compile_model
from .compiled import jacobian_address as jacobian_address
from .compiled import save_compiled as save_compiled
from .compiled import load_compiled as load_compiled
from .compiled import SavedModel as SavedModel
from .cache import cache_dir as cache_dir
from .loading import load_generated as load_generated
from .pysource import generate_source as generate_source
from .pysource import generate_jacobian_source as generate_jacobian_source
from .csource import generate_c_source as generate_c_source
from .csource import generate_c_jacobian_source as generate_c_jacobian_source

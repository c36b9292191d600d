"""Calling a generated model function (a numba ``cfunc``) through its machine address.

The integrator is compiled once for every model: the model-specific functions reach it as
integer addresses (see :mod:`fluidnet.dde.codegen`) and are called through this intrinsic, which
casts the address to a C function pointer ``void f(double, double*, ..., double*)`` and passes
the data pointers of the arrays.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["call_model"]


@intrinsic
def call_model(typingctx, addr, t, x, z, p, w, aux, out):
    """``f(t, x, z, p, w, aux, out)`` for the cfunc at ``addr`` (arrays: float64, C order)."""
    sig = types.void(addr, t, x, z, p, w, aux, out)

    def codegen(context, builder, signature, args):
        dbl = ir.DoubleType()
        dptr = dbl.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [dbl] + [dptr] * 6)
        fptr = builder.inttoptr(args[0], fnty.as_pointer())
        ptrs = []
        for ty, val in zip(signature.args[2:], args[2:], strict=True):
            ary = context.make_array(ty)(context, builder, val)
            ptrs.append(builder.bitcast(ary.data, dptr))
        builder.call(fptr, [args[1], *ptrs])
        return context.get_dummy_value()

    return sig, codegen

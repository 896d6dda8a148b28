"""s2s_ad: source-to-source automatic differentiation for Python and NumPy.

    import s2s_ad as ad

    @ad.grad
    def loss(x):
        return np.sum(np.tanh(x) ** 2)

    print(ad.source(loss))      # the generated gradient, as Python
"""
from .api import grad, jvp, source, value_and_grad, vjp
from .checking import check_grads
from .composed import hessian, hvp, jacobian
from .errors import (GradientCheckError, InputTypeError, InternalError, NoRuleError,
                     NonScalarOutputError, RuleError, S2SADError, SeedError,
                     SourceUnavailableError, UnsupportedSyntaxError, UnsupportedValueError,
                     WrtError)
from .rules import adjoint, nondifferentiable, tangent
from .runtime import stop_gradient

__version__ = "0.1.0"

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "hvp", "jacobian", "hessian", "source", "stop_gradient", "adjoint",
           "tangent", "nondifferentiable", "S2SADError", "UnsupportedSyntaxError", "NoRuleError",
           "SourceUnavailableError", "WrtError", "NonScalarOutputError", "RuleError", "SeedError",
           "InputTypeError", "UnsupportedValueError", "InternalError", "check_grads",
           "GradientCheckError", "__version__"]

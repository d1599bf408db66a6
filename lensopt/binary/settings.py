"""Settings of the contextual optimizer: frozen, validated, JSON round-trippable.

Column convention everywhere: context columns first, then system parameters. For refraction the
single context is the letter size (logMAR) and the system parameters are sphere and cylinder (D).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import random
import re
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any, ClassVar

import numpy as np

from lensopt.boxes import bounds_pairs, reference_values
from lensopt.gp import kernels
from lensopt.gp.kernels.bowl import AcuityBowl
from lensopt.gp.mean import BowlMean
from lensopt.gp.virtual import box_edge_signs

#: Rule names, in the order of the paper's Table 1, then extra rules lensopt offers.
RULES = ("ucb-ald", "ts-ald", "cbkg", "ucb-random", "bald", "ts-random", "random")
EXTRA_RULES = ("ucbf-ald", "ei-ald")
ALL_RULES = RULES + EXTRA_RULES

#: β of UCB_Φ in the contextual paper: Φ⁻¹(0.95).
PAPER_BETA = NormalDist().inv_cdf(0.95)

KERNEL_FAMILIES = ("se", "matern32", "matern52")
KERNEL_STRUCTURES = ("psychophysics", "context-product", "acuity-bowl")
INFERENCE_METHODS = ("laplace", "ep")


#: Random generators a seed could be mistaken for (:func:`check_seed` refuses them, saying why).
RANDOM_GENERATORS = (
    np.random.Generator,
    np.random.RandomState,
    np.random.BitGenerator,
    np.random.SeedSequence,
    random.Random,
)


def check_seed(seed: object) -> int:
    """``seed`` as a Python int: any integer ``>= 0`` (``int``, ``np.int64`` from ``np.arange``...),
    not a bool; a one-line ValueError otherwise. Every optimizer checks its seed here. The seed is
    recorded with the session (the randomness of each decision is drawn from ``(seed, n_trials)``),
    so a random generator, whose state would not be recorded, is refused."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and int(seed) >= 0:
        return int(seed)
    if isinstance(seed, RANDOM_GENERATORS):
        raise ValueError(
            f"seed must be an integer >= 0, got a {type(seed).__name__}: the seed is recorded so that the "
            "session can be replayed, and a generator's state is not; pass an int (e.g. seed=3)"
        )
    raise ValueError(f"seed must be an integer >= 0 (e.g. seed=3), got {seed!r}")


class FixedSettings:
    """Settings fixed when the optimizer is made: after its ``__init__``, an assignment to (or ``del``
    of) one of its settings raises an AttributeError that says how to get another value — a new
    optimizer (``from_settings`` with the setting changed, or ``from_state``) — instead of changing
    an attribute that the model, built from the value given, would not read (and that ``to_state``
    would save all the same).

    The settings are the named parameters of the ``__init__`` of the class and its bases (lensopt's own: a
    user's subclass keeps its own attributes changeable), the settings its ``**options``
    pass on (its ``_option_setting_names``, if any) and the attributes that hold settings under another name
    (``_settings_attributes``, ``settings`` always). Code inside ``__init__`` (any class's in the
    hierarchy) sets them freely; copies (``copy``, ``pickle``) are unaffected."""

    #: Attributes holding settings under a name that is no parameter of ``__init__`` (the optimizer's
    #: own; those of its bases are added).
    _settings_attributes: ClassVar[frozenset[str]] = frozenset({"settings"})
    #: Every name :meth:`__setattr__` refuses after construction (computed per class).
    _fixed_names: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_fixes_settings", False):
            type.__setattr__(cls, "__init__", _constructor(init))
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names: set[str] = set()
        for klass in cls.__mro__:  # a subclass may pass its base's settings on through **kwargs
            if not klass.__module__.startswith("lensopt."):  # a user's subclass: its own attributes are its own
                continue
            names |= klass.__dict__.get("_settings_attributes", frozenset())
            if issubclass(klass, FixedSettings) and "__init__" in klass.__dict__:
                parameters = inspect.signature(klass.__dict__["__init__"]).parameters.values()
                names |= {p.name for p in parameters if p.kind in kinds and p.name != "self"}
        cls._fixed_names = frozenset(names) | frozenset(getattr(cls, "_option_setting_names", ()))

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._fixed_names and not self.__dict__.get("_constructing"):
            raise AttributeError(fixed_setting_message(self, name))
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._fixed_names and not self.__dict__.get("_constructing"):
            raise AttributeError(fixed_setting_message(self, name))
        object.__delattr__(self, name)


def _constructor(init):
    """``init`` marked as constructing while it runs (nested ``super().__init__`` calls included), so
    that :class:`FixedSettings` lets it set the settings."""

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        depth = self.__dict__.get("_constructing", 0)
        self.__dict__["_constructing"] = depth + 1
        try:
            init(self, *args, **kwargs)
        except TypeError as exc:
            unknown = None if depth else _UNKNOWN_SETTING.match(str(exc))
            if unknown is None:
                raise
            raise TypeError(unknown_setting_message(self, unknown.group(1))) from None
        finally:
            if depth:
                self.__dict__["_constructing"] = depth
            else:
                del self.__dict__["_constructing"]

    __init__._fixes_settings = True  # type: ignore[attr-defined]
    return __init__


#: Python's words for a keyword no settings dataclass has (``AcuityLawSettings.__init__() got an
#: unexpected keyword argument 'beta'``), naming a class the person never wrote; or those of
#: :func:`unknown_setting_message` for an optimizer made inside another (``RefractionOptimizer``'s
#: ``ContextualOptimizer``), said again of the one the person made.
_UNKNOWN_SETTING = re.compile(
    r"^(?:\w+Settings\.__init__\(\) got an unexpected keyword argument|\w+\(\) has no setting) '(\w+)'"
)


def unknown_setting_message(optimizer: FixedSettings, name: str) -> str:
    """``AcuityLawOptimizer() has no setting 'beta'; its settings: …``: a keyword that no settings of
    ``optimizer``'s class take, named with the class the person made and the settings it has."""
    settings = sorted(n for n in type(optimizer)._fixed_names if not n.startswith("_") and n != "settings")
    return f"{type(optimizer).__name__}() has no setting {name!r}; its settings: {', '.join(settings)}"


def fixed_setting_message(optimizer: object, name: str) -> str:
    """The one line refusing to change setting ``name`` of ``optimizer`` after construction, with the
    way to another value."""
    cls = type(optimizer).__name__
    what = "holds the settings" if name == "settings" else "is a setting"
    head = (
        f"{cls}.{name} {what}, fixed when the optimizer is made (its model and its saved state keep the "
        "value given then)"
    )
    settings_dict = getattr(optimizer, "settings_dict", None)
    if (
        callable(getattr(type(optimizer), "from_settings", None))
        and callable(settings_dict)
        and name in settings_dict()
    ):
        how = f"{cls}.from_settings({{**optimizer.settings_dict(), {name!r}: value}}, optimizer.history)"
    else:
        how = f"{cls}(...) with other settings, or {cls}.from_state(state) with state['settings'] changed"
    return f"{head}; for another value make a new optimizer: {how}"


@dataclass(frozen=True)
class KernelSpec:
    """A kernel described by numbers, so optimizer states can be saved as JSON.

    ``structure``: ``"psychophysics"`` is ``θ s s' + k(x, x')`` (seed eq. 15, ``θ`` =
    ``context_variance``); ``"context-product"`` is ``s s' k(x, x')`` (seed §4); ``"acuity-bowl"``
    is :class:`lensopt.gp.kernels.bowl.AcuityBowl` ``+ k(x, x')``: the slope ``θ`` multiplies the
    letter size and the acuity law around a centre (built with ``centre=``), ``shift_variance`` the
    prior variance of the correction's shift from it (a full prescription from a start).
    ``family`` is the stationary kernel ``k`` on the system columns, with ARD ``lengthscales``
    (one per system column) and ``variance``. ``input_map``: an optional fixed matrix ``A``; the
    stationary kernel then measures distances in ``A x`` (one lengthscale per row of ``A``), e.g.
    the principal-meridian powers ``(S, S + C)`` of a lens (:data:`lensopt.refraction.MERIDIAN_MAP`).
    """

    structure: str = "psychophysics"
    family: str = "se"
    lengthscales: tuple[float, ...] = (1.0,)
    variance: float = 1.0
    context_variance: float = 1.0
    input_map: tuple[tuple[float, ...], ...] | None = None
    shift_variance: float = 1.0

    def __post_init__(self):
        if self.structure not in KERNEL_STRUCTURES:
            raise ValueError(f"kernel structure must be one of {KERNEL_STRUCTURES}, got {self.structure!r}")
        if self.family not in KERNEL_FAMILIES:
            raise ValueError(f"kernel family must be one of {KERNEL_FAMILIES}, got {self.family!r}")
        scales = tuple(float(v) for v in self.lengthscales)
        if not scales or not all(math.isfinite(v) and v > 0 for v in scales):
            raise ValueError(f"kernel lengthscales must be positive numbers, got {self.lengthscales!r}")
        object.__setattr__(self, "lengthscales", scales)
        for name in ("variance", "context_variance", "shift_variance"):
            value = float(getattr(self, name))
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"kernel {name} must be a positive number, got {value!r}")
            object.__setattr__(self, name, value)
        if self.input_map is not None:
            rows = tuple(tuple(float(v) for v in row) for row in self.input_map)
            if not rows or len({len(r) for r in rows}) != 1 or not all(math.isfinite(v) for r in rows for v in r):
                raise ValueError(
                    f"kernel input_map must be a non-empty matrix of finite numbers, got {self.input_map!r}"
                )
            object.__setattr__(self, "input_map", rows)

    def build(self, n_context: int, n_system: int, centre=None):
        """The kernel over columns ``[context..., system...]`` (``centre``: the system point the
        ``"acuity-bowl"`` structure is built around; the other structures ignore it)."""
        n_read = n_system if self.input_map is None else len(self.input_map)
        if self.input_map is not None and len(self.input_map[0]) != n_system:
            raise ValueError(f"kernel input_map has {len(self.input_map[0])} columns for {n_system} system parameters")
        if len(self.lengthscales) not in (1, n_read):
            raise ValueError(f"kernel has {len(self.lengthscales)} lengthscales for {n_read} system coordinates")
        context_dims = tuple(range(n_context))
        system_dims = tuple(range(n_context, n_context + n_system))
        # one lengthscale: an isotropic kernel (one hyperparameter when fitted); else ARD
        scales = self.lengthscales[0] if len(self.lengthscales) == 1 else list(self.lengthscales)
        stationary = {
            "se": kernels.SquaredExponential,
            "matern32": kernels.Matern32,
            "matern52": kernels.Matern52,
        }[self.family](scales, variance=self.variance, active_dims=system_dims, input_map=self.input_map)
        if self.structure == "psychophysics":
            return kernels.LinearContext(self.context_variance, active_dims=context_dims) + stationary
        if self.structure == "acuity-bowl":
            if centre is None or len(centre) != n_system or n_context != 1:
                raise ValueError(
                    "the acuity-bowl kernel needs one context column and a centre with one value per system "
                    f"parameter (the starting lens), got centre {centre!r}"
                )
            bowl = AcuityBowl(
                self.context_variance, self.shift_variance, centre, active_dims=context_dims + system_dims
            )
            return bowl + stationary
        return kernels.benchmark_context_kernel(stationary, context_dims=context_dims)

    def to_dict(self) -> dict:
        data = asdict(self) | {"lengthscales": list(self.lengthscales)}
        if self.structure != "acuity-bowl":
            del data["shift_variance"]  # states saved before the bowl kernel existed read the same
        if self.input_map is None:
            del data["input_map"]  # states saved before input maps existed read the same
        else:
            data["input_map"] = [list(row) for row in self.input_map]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> KernelSpec:
        if not isinstance(data, dict):
            raise ValueError(f"a kernel must be a JSON object of its fields, got {type(data).__name__}")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(
                f"unknown kernel field(s) {', '.join(unknown)}; the fields are: {', '.join(cls.__dataclass_fields__)}"
            )
        return cls(**data)


@dataclass(frozen=True)
class OptimizerSettings:
    """Everything that determines a contextual optimizer's choices, apart from the history.

    ``reference_context``: the context ``s₀`` at which the x-step and the reported optimum are
    evaluated: ``None`` for the upper context bound (the benchmarks' ``s = 1``), a tuple of
    values, or ``"adaptive"``: the model's threshold context at its current optimum (for the
    psychophysics kernel, the predicted best acuity), where ``Φ`` is least saturated.
    ``refit_every``: re-fit the hyperparameters every that many trials (``None``: never), from
    ``refit_after`` trials on. ``guess_rate``/``lapse_rate``: the floored likelihood
    ``γ + (1 − γ − λ) Φ(f)`` of the model (METHOD.md §2b); 0 and 0 is the papers' plain probit.
    ``prior_mean``: constant prior mean of the latent (0 in the papers). ``min_information_bits``:
    below this BALD at the chosen system, the sequential rules choose by joint BALD (0: never).
    ``search_tolerance``: relative tolerance of the L-BFGS-B refinement of every acquisition
    search (its ``ftol``); ``None``: scipy's default (2.2e-9), as in the papers' runs.
    ``ep_tolerance``: EP's convergence tolerance (the largest relative change of a site parameter);
    ``None``: :data:`lensopt.gp.ep.PARALLEL_EP_TOLERANCE`. ``ep_match_clipped_mean``: EP's sites
    whose precision is clipped at 0 (the floored likelihood is not log-concave there) give the
    posterior the tilted mean (:func:`lensopt.gp.ep._site_parameters`); ``False``: the unclipped
    formula, as before (saved sessions, the full prescription's campaigns). ``draws_at_last_threshold``: with an
    adaptive reference, the draw rules pin the threshold at the last tested lens instead of ``s₀``
    where that cannot change the lens (:func:`lensopt.binary.rules.x_step_free_of_context`; it saves
    the search for ``s₀``, and the search stops elsewhere within its tolerance); ``False``: ``s₀``, as
    in the papers' runs.
    ``prior_centre``/``prior_depth``: with a centre (one value per system parameter), the prior mean
    is the bowl ``prior_mean − prior_depth · log10(1 + |x − prior_centre|²)``
    (:class:`lensopt.gp.mean.BowlMean`: a refraction that starts from a known lens); ``None``: the
    constant ``prior_mean``. ``objective_tilt``: a preference among system points of equal latent,
    one value per system parameter (latent units per unit): the x-step and the reported optimum
    maximize ``f(s₀, x) + tilt · x`` instead of ``f`` (the model itself is unchanged); ``None``: none.
    ``edge_sign_noise``: the model is also told that the latent falls outward across every face of
    the system box (virtual sign observations, Siivola et al. 2018; :func:`lensopt.gp.virtual.box_edge_signs`),
    with this noise (latent units per unit of the system); ``None``: not told, as in the papers' runs.
    ``edge_sign_points``: the observations on each face, per system column along it.
    ``thompson_scale``: the draw rules maximize ``μ + c (f̃ − μ)``, the posterior draw ``f̃`` with
    its deviation from the posterior mean ``μ`` scaled by ``c`` (:class:`lensopt.acquisition.ThompsonSample`);
    1: the draw itself, as in the papers' runs.
    """

    rule: str = "ucb-ald"
    seed: int = 0
    system_bounds: tuple[tuple[float, float], ...] = ((-4.0, 4.0), (-4.0, 4.0))
    context_bounds: tuple[tuple[float, float], ...] = ((-1.0, 2.0),)
    kernel: KernelSpec = field(default_factory=KernelSpec)
    inference: str = "laplace"
    n_initial: int = 5
    beta: float = PAPER_BETA
    reference_context: object = None
    n_candidates: int = 128
    n_starts: int = 2
    n_thompson_features: int = 512
    refit_every: int | None = None
    refit_after: int = 40
    guess_rate: float = 0.0
    lapse_rate: float = 0.0
    prior_mean: float = 0.0
    min_information_bits: float = 0.0
    search_tolerance: float | None = None
    ep_tolerance: float | None = None
    ep_match_clipped_mean: bool = False
    draws_at_last_threshold: bool = False
    prior_centre: tuple[float, ...] | None = None
    prior_depth: float = 0.0
    objective_tilt: tuple[float, ...] | None = None
    edge_sign_noise: float | None = None
    edge_sign_points: int = 9
    thompson_scale: float = 1.0

    def __post_init__(self):
        if self.rule not in ALL_RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of: {', '.join(ALL_RULES)}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "system_bounds", bounds_pairs("system_bounds", self.system_bounds))
        object.__setattr__(self, "context_bounds", bounds_pairs("context_bounds", self.context_bounds))
        if isinstance(self.kernel, dict):
            object.__setattr__(self, "kernel", KernelSpec.from_dict(self.kernel))
        if self.inference not in INFERENCE_METHODS:
            raise ValueError(f"inference must be one of {INFERENCE_METHODS}, got {self.inference!r}")
        if not isinstance(self.n_initial, int) or self.n_initial < 0:
            raise ValueError(f"n_initial must be a non-negative integer, got {self.n_initial!r}")
        if not (math.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be a non-negative number, got {self.beta!r}")
        ref = self.reference_context
        if ref is not None and not (isinstance(ref, str) and ref == "adaptive"):
            if isinstance(ref, str):
                raise ValueError(f"reference_context must be None, 'adaptive' or numbers, got {ref!r}")
            object.__setattr__(self, "reference_context", reference_values(ref, self.context_bounds))
        for name in ("n_candidates", "n_starts", "n_thompson_features", "refit_after"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < (0 if name in ("n_starts", "refit_after") else 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.refit_every is not None and (not isinstance(self.refit_every, int) or self.refit_every < 1):
            raise ValueError(f"refit_every must be a positive integer or None, got {self.refit_every!r}")
        for name in ("guess_rate", "lapse_rate"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (math.isfinite(value) and value >= 0)
            ):
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        mib = self.min_information_bits
        if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not (math.isfinite(mib) and 0 <= mib < 1):
            raise ValueError(f"min_information_bits must be a number in [0, 1), got {mib!r}")
        object.__setattr__(self, "min_information_bits", float(mib))
        if (
            isinstance(self.prior_mean, bool)
            or not isinstance(self.prior_mean, (int, float))
            or not math.isfinite(self.prior_mean)
        ):
            raise ValueError(f"prior_mean must be a finite number, got {self.prior_mean!r}")
        object.__setattr__(self, "prior_mean", float(self.prior_mean))
        if self.prior_centre is not None:
            centre = self.prior_centre
            if (
                isinstance(centre, (str, bytes))
                or not hasattr(centre, "__len__")
                or len(centre) != len(self.system_bounds)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in centre)
            ):
                raise ValueError(
                    f"prior_centre must be None or one finite number per system parameter, got {self.prior_centre!r}"
                )
            object.__setattr__(self, "prior_centre", tuple(float(v) for v in centre))
        if self.objective_tilt is not None:
            tilt = self.objective_tilt
            if (
                isinstance(tilt, (str, bytes))
                or not hasattr(tilt, "__len__")
                or len(tilt) != len(self.system_bounds)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in tilt)
            ):
                raise ValueError(f"objective_tilt must be None or one finite number per system parameter, got {tilt!r}")
            object.__setattr__(self, "objective_tilt", tuple(float(v) for v in tilt))
        depth = self.prior_depth
        if isinstance(depth, bool) or not isinstance(depth, (int, float)) or not (math.isfinite(depth) and depth >= 0):
            raise ValueError(f"prior_depth must be a number >= 0, got {depth!r}")
        object.__setattr__(self, "prior_depth", float(depth))
        noise = self.edge_sign_noise
        if noise is not None:
            if (
                isinstance(noise, bool)
                or not isinstance(noise, (int, float))
                or not (math.isfinite(noise) and noise > 0)
            ):
                raise ValueError(f"edge_sign_noise must be a positive number or None, got {noise!r}")
            object.__setattr__(self, "edge_sign_noise", float(noise))
        points = self.edge_sign_points
        if isinstance(points, bool) or not isinstance(points, int) or points < 2:
            raise ValueError(f"edge_sign_points must be an integer >= 2, got {points!r}")
        for name in ("draws_at_last_threshold", "ep_match_clipped_mean"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        for name in ("search_tolerance", "ep_tolerance"):
            tol = getattr(self, name)
            if tol is not None:
                if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0.0 < tol < 1.0:
                    raise ValueError(f"{name} must be a number in (0, 1) or None, got {tol!r}")
                object.__setattr__(self, name, float(tol))
        scale = self.thompson_scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"thompson_scale must be a positive number (1: the posterior draw itself), got {scale!r}")
        object.__setattr__(self, "thompson_scale", float(scale))
        if self.guess_rate + self.lapse_rate >= 1.0:
            raise ValueError(f"guess_rate + lapse_rate must be < 1, got {self.guess_rate} + {self.lapse_rate}")

    @property
    def n_context(self) -> int:
        return len(self.context_bounds)

    @property
    def n_system(self) -> int:
        return len(self.system_bounds)

    @property
    def bounds(self) -> tuple[tuple[float, float], ...]:
        return self.context_bounds + self.system_bounds

    def to_dict(self) -> dict:
        data = asdict(self)
        data["kernel"] = self.kernel.to_dict()
        data["system_bounds"] = [list(b) for b in self.system_bounds]
        data["context_bounds"] = [list(b) for b in self.context_bounds]
        if isinstance(self.reference_context, tuple):
            data["reference_context"] = list(self.reference_context)
        if self.objective_tilt is None:  # states saved before the tilt read the same
            del data["objective_tilt"]
        else:
            data["objective_tilt"] = list(self.objective_tilt)
        if not self.ep_match_clipped_mean:  # states saved before the mean-matched clipping read the same
            del data["ep_match_clipped_mean"]
        if self.edge_sign_noise is None:  # states saved before the edge signs read the same
            del data["edge_sign_noise"], data["edge_sign_points"]
        if self.thompson_scale == 1.0:  # states saved before the scaled draws read the same
            del data["thompson_scale"]
        if self.prior_centre is None:  # states saved before the bowl prior read the same
            del data["prior_centre"], data["prior_depth"]
        else:
            data["prior_centre"] = list(self.prior_centre)
        return data

    def prior_mean_function(self):
        """The model's prior mean: the float ``prior_mean``, or the :class:`lensopt.gp.mean.BowlMean`
        around ``prior_centre`` on the system columns (of depth 0 that bowl is the constant
        ``prior_mean`` itself, returned as such: the same numbers, without evaluating the bowl)."""
        if self.prior_centre is None or self.prior_depth == 0.0:
            return self.prior_mean
        dims = tuple(range(self.n_context, self.n_context + self.n_system))
        return BowlMean(self.prior_mean, self.prior_depth, self.prior_centre, dims)

    def virtual_observations(self):
        """The model's virtual sign observations at the system box's faces (``None`` without
        ``edge_sign_noise``)."""
        if self.edge_sign_noise is None:
            return None
        return box_edge_signs(self.n_context, self.system_bounds, self.edge_sign_noise, self.edge_sign_points)

    @classmethod
    def from_dict(cls, data: dict) -> OptimizerSettings:
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown optimizer setting(s): {', '.join(sorted(unknown))}")
        return cls(**data)

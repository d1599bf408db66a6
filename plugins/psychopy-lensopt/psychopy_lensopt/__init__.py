"""psychopy-lensopt: lensopt's refraction loop for PsychoPy Builder (:class:`LensoptRefractionLoop`)."""

from psychopy_lensopt.loop import LensoptRefractionLoop

__all__ = ["LensoptRefractionLoop"]

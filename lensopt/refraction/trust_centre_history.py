"""Which trust centre a stored full-prescription comparison ran with, where its settings do not say.

The trust region came to be centred by the posterior mean (and the duels to report with half the
tilt) on 27 Nov 2026; the settings stored neither until 30 Nov. :class:`TrustCentreHistory` tells a
stored session's from what its settings hold and its creation time (:meth:`~TrustCentreHistory.settings_as_ran`),
and gives the other for a replay of its trials to choose (:func:`lensopt.modes.as_ran.as_ran`).
"""

from __future__ import annotations

import math

from lensopt.refraction.trial import TrialHistory

#: When the trust region came to be centred by the posterior mean, and the duels to report with
#: half the tilt (commit 45b3122, 27 Nov 2026 13:11:51 UTC, unix seconds): sessions created before
#: ran with the centre ``"tilted"``. Their settings stored neither until commit cc8b319 (30 Nov
#: 2026 13:18 UTC).
MEAN_TRUST_CENTRE_SINCE_S = 1795785111


class TrustCentreHistory(TrialHistory):
    """The trust centre of a stored full-prescription comparison (mixed into
    :class:`lensopt.refraction.prescription_comparisons.PrescriptionComparisons`)."""

    #: When this comparison got its prior about the start (``start_prior_depth``, unix seconds): a
    #: session whose settings lack it was made by a lensopt from before (set by each subclass).
    START_PRIOR_SINCE_S: float = math.inf

    @classmethod
    def centred_by_mean(cls, settings: dict, created_at_s: float) -> bool:
        """Whether a session whose ``settings`` store no trust centre ran with the centre by the mean:
        one whose settings hold the prior about the start (a lensopt from between the prior and the
        stored centre, 30 Nov 2026 13:18 UTC), or one created between :data:`MEAN_TRUST_CENTRE_SINCE_S`
        and the prior (the likeliest: a lensopt of those hours; an older one installed still is
        told apart by the session's trials, :func:`lensopt.modes.as_ran.as_ran`). Otherwise the
        tilted centre, of every lensopt before: one created later without the prior was made by an
        older lensopt installed still, its settings say, not by one of those hours."""
        if "start_prior_depth" in settings:
            return True
        return MEAN_TRUST_CENTRE_SINCE_S <= created_at_s < cls.START_PRIOR_SINCE_S

    @classmethod
    def settings_as_ran(cls, settings: dict, created_at_s: float) -> dict:
        """The stored ``settings`` of a session created at ``created_at_s`` with the trust centre it
        ran with when they do not store one (:meth:`centred_by_mean`)."""
        return cls._settings_centred(settings, created_at_s, cls.centred_by_mean(settings, created_at_s))

    @classmethod
    def settings_candidates(cls, settings: dict, created_at_s: float) -> list[dict]:
        """:meth:`settings_as_ran`, then, for settings that store no trust centre, the same with the
        other centre: what a replay of the session's trials chooses from
        (:func:`lensopt.modes.as_ran.as_ran`)."""
        guess = cls.settings_as_ran(settings, created_at_s)
        if "trust_centre" in settings:
            return [guess]
        mean = cls.centred_by_mean(settings, created_at_s)
        return [guess, cls._settings_centred(settings, created_at_s, not mean)]

    @classmethod
    def _settings_centred(cls, settings: dict, created_at_s: float, mean: bool) -> dict:
        """``settings`` with the centre by the mean (``mean``) or by the tilted mean, when not stored."""
        return {"trust_centre": "mean" if mean else "tilted", **super().settings_as_ran(settings, created_at_s)}

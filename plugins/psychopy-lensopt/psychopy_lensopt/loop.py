"""The "lensopt refraction" loop of PsychoPy Builder.

A loop type like Builder's Staircase: its compiled code builds a
:class:`lensopt.psychopy.RefractionHandler` over a :class:`lensopt.refraction.RefractionOptimizer`
and iterates it. Inside the loop the routines see ``letter_logmar``, ``sphere_d`` and ``cylinder_d``
(``$letter_logmar`` in a component's field), and with a *Calibration* ``letter_height_px``, the
letter's height on this screen, the letter sizes then limited to those the screen draws faithfully
(as ``lensopt run`` limits them); at the end of each iteration the loop tells the
optimizer its *Response* (a code expression, ``key_resp.corr`` by default: the letter named right),
or the simulated patient's answer when *Simulated patient* names a correction. The loop ends at
the trial budget or by the stopping rule.

Builder finds the loop by its class: a subclass of ``_BaseLoopHandler`` with a ``tag`` is a loop
type (``getAllLoopTypes``) once this module is imported, which loading the plugin does.
"""

from __future__ import annotations

import re

from psychopy.experiment.loops import _BaseLoopHandler
from psychopy.experiment.params import Param

#: The rules of lensopt's letter optimizers, the first the default: the GP optimizer's
#: (lensopt.binary.rules.RULE_FUNCTIONS) and the acuity-law optimizer's (grid Bayes under the
#: blur-acuity law, lensopt.refraction.AcuityLawOptimizer: the clinical protocol's).
RULES = ("ucb-ald", "acuity-law", "ts-ald", "ucbf-ald", "ei-ald", "cbkg", "bald", "ucb-random", "ts-random", "random")

#: The rule that is not the GP optimizer's (it takes no ``rule`` setting of its own).
ACUITY_LAW = "acuity-law"

#: The trial columns a routine inside the loop sees as variables.
TRIAL_VARIABLES = ("letter_logmar", "sphere_d", "cylinder_d")


class LensoptRefractionLoop(_BaseLoopHandler):
    """Builder's "lensopt refraction" loop: letters and lenses chosen by lensopt, trial by trial."""

    tag = "LensoptRefractionLoop"  # the .psyexp's loopType (the class name, as Builder writes it)
    label = "lensopt refraction"
    plugin = "psychopy-lensopt"

    def __init__(
        self,
        exp,
        name="lensopt",
        nTrials="40",
        rule="ucb-ald",
        seed="1",
        sphereBounds="(-4.0, 4.0)",
        cylinderBounds="(-4.0, 4.0)",
        letterBounds="(-1.0, 2.0)",
        calibration="",
        nAlternatives="26",
        lensStep="0.25",
        stopConfidence="0.95",
        minTrials="20",
        checkLetters="0",
        accommodation="",
        response="key_resp.corr",
        simulatedPatient="",
        isTrials=True,
        decideAhead=True,
    ):
        super().__init__()
        self.type = self.tag
        self.exp = exp
        self.children = []
        self.order = [
            "name",
            "isTrials",
            "nTrials",
            "rule",
            "seed",
            "sphereBounds",
            "cylinderBounds",
            "letterBounds",
            "calibration",
            "nAlternatives",
            "accommodation",
            "lensStep",
            "stopConfidence",
            "minTrials",
            "checkLetters",
            "decideAhead",
            "response",
            "simulatedPatient",
        ]
        p = self.params = {}
        p["name"] = Param(name, valType="code", inputType="name", label="Name", hint="Name of this loop")
        p["isTrials"] = Param(
            isTrials,
            valType="bool",
            inputType="bool",
            label="Is trials",
            hint="Each iteration is one trial: one row of the data file",
        )
        p["nTrials"] = Param(
            nTrials, valType="code", inputType="single", label="Trials", hint="Trial budget (the most trials run)"
        )
        p["rule"] = Param(
            rule,
            valType="str",
            inputType="choice",
            allowedVals=list(RULES),
            categ="lensopt",
            label="Rule",
            hint="The acquisition rule choosing each lens (x) and letter size (s)",
        )
        p["seed"] = Param(seed, valType="code", inputType="single", categ="lensopt", label="Seed")
        for key, label in (
            ("sphereBounds", "Sphere bounds (D)"),
            ("cylinderBounds", "Cylinder bounds (D)"),
            ("letterBounds", "Letter bounds (logMAR)"),
        ):
            p[key] = Param(
                locals()[key], valType="code", inputType="single", categ="lensopt", label=label, hint="(low, high)"
            )
        p["calibration"] = Param(
            calibration,
            valType="code",
            inputType="single",
            categ="lensopt",
            label="Calibration",
            hint="The screen: Calibration(screen_width_cm=..., screen_width_px=..., screen_height_px=..., "
            "distance_cm=...), or the name of one made in a Code component; the letter sizes are limited to "
            "those it draws faithfully and the routines see letter_height_px (empty: none, sizes as given)",
        )
        p["nAlternatives"] = Param(
            nAlternatives,
            valType="code",
            inputType="single",
            categ="lensopt",
            label="Alternatives",
            hint="Letters to choose from (26, or 10 for Sloan letters): the guess rate is 1/n",
        )
        p["accommodation"] = Param(
            accommodation,
            valType="str",
            inputType="single",
            categ="lensopt",
            label="Accommodation (D)",
            hint="acuity-law rule only: the amplitudes of accommodation the eye may have, e.g. 0, 0.5, 1, 2, 4, 8 "
            "(clinical-refraction's); the lens is then the relaxed eye's, the most plus it reads best through "
            "(empty: none, the clearest lens, which may be too minus for an eye that accommodates)",
        )
        p["lensStep"] = Param(
            lensStep,
            valType="code",
            inputType="single",
            categ="lensopt",
            label="Lens step (D)",
            hint="Phoropter step the lenses are rounded to; None for none",
        )
        p["stopConfidence"] = Param(
            stopConfidence,
            valType="code",
            inputType="single",
            categ="Stop",
            label="Stop confidence",
            hint="Stop when the model is this sure of the best lens (empty: run the whole budget)",
        )
        p["minTrials"] = Param(
            minTrials, valType="code", inputType="single", categ="Stop", label="Minimum trials", hint="Before any stop"
        )
        p["checkLetters"] = Param(
            checkLetters,
            valType="code",
            inputType="single",
            categ="Stop",
            label="Check letters",
            hint="Before a stop, the letters to be read through the reported lens (0: no check)",
        )
        p["decideAhead"] = Param(
            decideAhead,
            valType="bool",
            inputType="bool",
            categ="lensopt",
            label="Decide ahead",
            hint="Decide the next trial for both answers in a worker process while the letter is shown, so that "
            "no frame waits for a decision (lensopt.psychopy.lookahead); off: decide after each answer",
        )
        p["response"] = Param(
            response,
            valType="code",
            inputType="single",
            categ="Response",
            label="Response",
            hint="Whether the letter was named right, told to lensopt at the end of each iteration",
        )
        p["simulatedPatient"] = Param(
            simulatedPatient,
            valType="str",
            inputType="single",
            categ="Response",
            label="Simulated patient",
            hint="'sphere_d, cylinder_d' of a simulated patient who answers instead of Response (empty: a person)",
        )

    @property
    def name(self):
        return self.params["name"].val

    def getType(self):
        return self.tag

    def writeInitCode(self, buff):
        pass  # the handler is made where the loop starts

    def _stop_code(self) -> str:
        if str(self.params["stopConfidence"].val).strip() in ("", "None"):
            return "None"
        rule = "StopRule(confidence=%(stopConfidence)s, min_trials=%(minTrials)s, max_trials=%(nTrials)s" % self.params  # noqa: UP031 - Param's str is its code, as PsychoPy's loops use it
        check = str(self.params["checkLetters"].val).strip() if "checkLetters" in self.params else ""
        return rule + ("" if check in ("", "0", "None") else f", check_letters={check}") + ")"

    def _response_code(self) -> str:
        """The answer told to the handler: the *Response* as written (the handler refuses what is not
        right or wrong, a key name say; ``bool()`` around it made a pressed "n" right)."""
        if str(self.params["simulatedPatient"].val).strip():
            return f"{self.name}Patient.respond({', '.join(TRIAL_VARIABLES)})"
        return "%(response)s" % self.params  # noqa: UP031 - as above

    def _check_response(self) -> None:
        """A *Response* ``<keyboard>.corr`` of a Keyboard component that does not store correct
        answers is refused when the script is compiled: its ``corr`` stays 0, and every answer was
        told wrong without a word (Builder's Keyboard has *Store correct* off by default). So is one
        whose *Correct answer* is the capital ``$letter`` itself: its keys are lower case."""
        if str(self.params["simulatedPatient"].val).strip():
            return
        response = str(self.params["response"].val).strip()
        named = re.fullmatch(r"(\w+)\.corr", response)
        keyboard = self.exp.getComponentFromName(named.group(1)) if named else None
        if keyboard is not None and "storeCorrect" in keyboard.params and not keyboard.params["storeCorrect"].val:
            raise ValueError(
                f"lensopt refraction '{self.name}': its Response is {response}, but the Keyboard component "
                f"'{named.group(1)}' does not store correct answers, so every answer would be told wrong: tick "
                "its Store correct and set its Correct answer to the letter shown, in lower case ($letter.lower())"
            )
        correct = str(keyboard.params["correctAns"].val).strip() if keyboard and "correctAns" in keyboard.params else ""
        if correct.replace(" ", "") in ("$letter", "letter"):
            # a Keyboard's keys are lower case ('z'), the letters LetterStim draws capitals ('Z'): the
            # docs' recipe ($letter) had every answer of a patient who named each letter told wrong
            raise ValueError(
                f"lensopt refraction '{self.name}': the Keyboard component '{named.group(1)}' compares its key, "
                f"in lower case, with {correct}, a capital letter, so every answer would be told wrong: set its "
                "Correct answer to $letter.lower()"
            )

    def _acuity_law(self) -> bool:
        """Whether the loop's rule is the acuity law (its optimizer is then ``AcuityLawOptimizer``)."""
        return str(self.params["rule"].val).strip().strip("'\"") == ACUITY_LAW

    def _accommodation(self) -> str:
        """The loop's *Accommodation (D)*, stripped ("" when empty; a .psyexp written before the field has none)."""
        return str(self.params["accommodation"].val).strip() if "accommodation" in self.params else ""

    def _optimizer_code(self) -> str:
        """The optimizer's class and its rule argument (the acuity-law optimizer takes none, and the
        loop's amplitudes of accommodation when it has them)."""
        if self._acuity_law():
            if not self._accommodation():
                return "    AcuityLawOptimizer(\n"
            amplitudes = "tuple(float(v) for v in %(accommodation)s.strip('()[], ').split(','))"
            return "    AcuityLawOptimizer(\n        accommodation_d=" + amplitudes + ",\n"
        return "    RefractionOptimizer(\n        rule=%(rule)s,\n"

    def _accommodation_check(self) -> str:
        """With a GP rule, which has no model of accommodation, amplitudes given are refused before any
        trial: a one-line error naming the field and the fix."""
        if not self._accommodation() or self._acuity_law():
            return ""
        return (
            "raise ValueError(\"lensopt refraction '%(name)s': Accommodation (D) is for the acuity-law rule "
            'only (the GP rules have no model of accommodation); clear it or choose the rule acuity-law")\n'
        )

    def _calibrated(self) -> bool:
        """Whether the loop has a *Calibration* (a .psyexp written before it had the field has none)."""
        return "calibration" in self.params and str(self.params["calibration"].val).strip() not in ("", "None")

    def _calibration_code(self) -> str:
        """The calibration — in a full-screen window, of its framebuffer's pixels, with a warning in the
        log when they are not the calibration's (``full_screen_calibration``) — and the letter sizes it
        draws faithfully (``letter_bounds_within``: a CalibrationError naming the loop's *Letter
        bounds* and the sizes it draws when it draws none of them), before the handler; without one,
        a warning in the log that the letter bounds are asked whatever the screen draws."""
        if not self._calibrated():
            return (
                "logging.warning(\"lensopt refraction '%(name)s': no Calibration, so the letter sizes %(letterBounds)s "
                "logMAR are asked whatever this screen draws; give the loop your screen's Calibration\")\n"
            )
        return (
            "from lensopt.experiment.calibration import Calibration, full_screen_calibration, letter_bounds_within\n"
            "%(name)sCalibration = %(calibration)s\n"
            "if win.fullscr:  # sized on the framebuffer's pixels, as lensopt run does (a Retina screen has twice as many)\n"
            "    %(name)sCalibration = full_screen_calibration(\n"
            '        %(name)sCalibration, win.size, logging.warning, "screen_width_cm of the loop\'s Calibration"\n'
            "    )\n"
            "%(name)sLetterBounds = letter_bounds_within(\n"
            "    %(letterBounds)s,\n"
            "    %(name)sCalibration.renderable_logmar(int(win.size[1])),\n"
            "    %(name)sCalibration,\n"
            "    \"Letter bounds of lensopt refraction '%(name)s'\",\n"
            ")\n"
        )

    def writeLoopStartCode(self, buff):
        self._check_response()
        self.thisName = self.exp.namespace.makeLoopIndex(self.name)
        letter_bounds = "%(name)sLetterBounds" if self._calibrated() else "%(letterBounds)s"
        code = (
            "\n"
            "# --- Prepare to start lensopt refraction '%(name)s' ---\n"
            + self._calibration_code()
            + self._accommodation_check()
            + "from lensopt.psychopy import RefractionHandler\n"
            "from lensopt.refraction import AcuityLawOptimizer, RefractionOptimizer\n"
            "from lensopt.refraction.lens import diopter_text\n"
            "from lensopt.stopping import StopRule, confidence_text\n"
            "%(name)s = RefractionHandler(\n" + self._optimizer_code() + "        seed=%(seed)s,\n"
            "        sphere_bounds_d=%(sphereBounds)s,\n"
            "        cylinder_bounds_d=%(cylinderBounds)s,\n"
            "        letter_bounds_logmar=" + letter_bounds + ",\n"
            "        n_alternatives=%(nAlternatives)s,\n"
            "        lens_step_d=%(lensStep)s,\n"
            "        stop=" + self._stop_code() + ",\n"
            "    ),\n"
            "    n_trials=%(nTrials)s,\n"
            "    lookahead=%(decideAhead)s,\n"
            "    name='%(name)s',\n"
            "    exp=thisExp,\n"
            "    extraInfo=expInfo,\n"
            ")\n"
        )
        buff.writeIndentedLines(code % self.params)
        if str(self.params["simulatedPatient"].val).strip():
            patient = (
                "from lensopt.observer import SimulatedPatient\n"
                "%(name)sPatient = SimulatedPatient(*(float(v) for v in %(simulatedPatient)s.split(',')), "
                "n_alternatives=%(nAlternatives)s, seed=%(seed)s)\n"
            )
            buff.writeIndentedLines(patient % self.params)
        buff.writeIndentedLines(f"\nfor {self.thisName} in {self.name}:\n")
        buff.setIndentLevel(1, relative=True)
        buff.writeIndentedLines(
            f"currentLoop = {self.name}\n"
            "thisExp.timestampOnFlip(win, 'thisRow.t', format=globalClock.format)\n"
            + "".join(f"{variable} = {self.thisName}['{variable}']\n" for variable in TRIAL_VARIABLES)
        )
        if self._calibrated():
            buff.writeIndentedLines(
                f"letter_height_px = {self.name}Calibration.letter_height_px(letter_logmar)\n"
                f"{self.name}.addData('{self.name}.letter_height_px', letter_height_px)\n"
            )

    def writeLoopEndCode(self, buff):
        buff.writeIndentedLines(f"{self.name}.addResponse({self._response_code()})\n")
        if self.params["isTrials"].val:
            buff.writeIndentedLines(
                "thisExp.nextEntry()\n"
                "if thisSession is not None:\n"
                "    # if running in a Session with a Liaison client, send data up to now\n"
                "    thisSession.sendExperimentData()\n"
            )
        buff.setIndentLevel(-1, relative=True)
        name = self.name
        buff.writeIndentedLines(
            f"# lensopt refraction '{name}' completed: its result, a row of the data file of its own\n"
            f"{name}Result = {name}.result()\n"
            f"{name}Sphere, {name}Cylinder = {name}Result['best']\n"
            f"{name}LensSphere, {name}LensCylinder = {name}Result['lens_d']  # on the lens step\n"
            f"{name}Said = 'best lens S %s D  C %s D after %d trials' % (diopter_text({name}LensSphere), "
            f"diopter_text({name}LensCylinder), {name}Result['n_trials'])\n"
            f"if {name}Result.get('confidence') is not None:\n"
            f"    {name}Said += ', confidence %s' % confidence_text({name}Result['confidence'])\n"
            f"if {name}Result['stop_reason'] == 'max_trials':\n"
            f"    {name}Said += ' (the stopping rule\\'s budget ran out first: not sure enough to prescribe)'\n"
            f"elif {name}Result['stop_reason'] == 'confidence':\n"
            f"    {name}Said += ' (stopped: sure enough)'\n"
            f"if {name}Result.get('most_plus_note'):  # may be too minus for an eye that accommodates\n"
            f"    {name}Said += '; ' + {name}Result['most_plus_note']\n"
            f"for {name}Key, {name}Value in (('best_sphere_d', {name}Sphere), ('best_cylinder_d', {name}Cylinder),\n"
            f"        ('lens_sphere_d', {name}LensSphere), ('lens_cylinder_d', {name}LensCylinder),\n"
            f"        ('n_trials', {name}Result['n_trials']), ('stopped', {name}Result['stopped']),\n"
            f"        ('stop_reason', {name}Result['stop_reason']), ('confidence', {name}Result.get('confidence')),\n"
            f"        ('most_plus_note', {name}Result.get('most_plus_note')),\n"
            # what a methods section needs of the loop, in the data file (they were in the .psydat pickle only)
            f"        ('seed', {self.params['seed']}), ('rule', {self.params['rule']}),\n"
            f"        ('n_alternatives', {self.params['nAlternatives']})):\n"
            f"    thisExp.addData('{name}.' + {name}Key, {name}Value)\n"
            "thisExp.nextEntry()\n"
            f"logging.exp('lensopt: ' + {name}Said)\n"
            f"print('lensopt:', {name}Said)\n"
        )

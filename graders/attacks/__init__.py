"""A reusable attack generator: responses derived from a task's reference that a grader must
refuse, and honest variants it must accept.

Reading guide
-------------
Each generator takes a reference and returns :class:`Case` records (``should_pass`` False for an
attack, True for an honest variant), with the class of attack they belong to:

- :func:`math_cases` (``graders.attacks.numeric``): decimal approximations of the reference in
  every structure, set/interval/tuple swaps, hedges that hide the right value among wrong ones
  (``or``, ``\\pm``, extra boxes, an alternative on a later line), hidden boxes, timeout bait;
  honest variants in the common harnesses' answer formats (boxed, "The answer is", Minerva's
  "Final Answer: The final answer is ... I hope it is correct.", ``####``), Unicode minus,
  digit-group spaces and equivalent forms;
- :func:`exact_cases`: the same hedges for an exact (integer or string) answer, typography;
- :func:`qa_cases` (``graders.attacks.text``): hedges, candidate lists, a single word of a
  multi-word gold, negation, hidden text; honest formats and typography;
- :func:`rubric_cases`, :func:`ifeval_cases`: look-alike letters, zero-width characters,
  full-width punctuation and hidden text against ``contains`` / IFEval instructions (per check);
- :func:`proof_cases` (``graders.attacks.proof``): admitted proofs, axioms, file-writing
  vernacular, a weakened statement.

:func:`run_cases` grades every case with an async grader and returns an :class:`AttackReport`
(counts per class, and the cases the grader got wrong). A case with ``check`` set is judged on
that named sub-check of the grade (a rubric check, an IFEval instruction) rather than the whole.
Nothing here special-cases data: every case is built from the reference alone.
"""

from graders.attacks.cases import AttackReport, Case, run_cases
from graders.attacks.numeric import exact_cases, math_cases
from graders.attacks.proof import proof_cases
from graders.attacks.text import ifeval_cases, qa_cases, rubric_cases

__all__ = [
    "AttackReport",
    "Case",
    "exact_cases",
    "ifeval_cases",
    "math_cases",
    "proof_cases",
    "qa_cases",
    "rubric_cases",
    "run_cases",
]

"""The offline survey: scripted lead and Explore policies that survey a directory for real.

:mod:`.common` holds what both policies share and :func:`~.common.survey_policies`;
:mod:`.lead` and :mod:`.explore` are the two policies; :mod:`.files`,
:mod:`.folder`, :mod:`.results`, :mod:`.replay` and :mod:`.summary` are their parts.
"""

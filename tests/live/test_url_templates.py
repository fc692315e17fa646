"""Pages fill in URL patterns that come from reverse(), never hard-coded paths."""

from annotation.url_templates import url_template


def test_url_templates_leave_each_placeholder_for_the_page():
    assert url_template("annotation:play", uid="str") == "/play/{uid}/"
    assert url_template("annotation:study-report", study_id="int", fmt="str") == "/studies/{study_id}/report.{fmt}"
    assert url_template("annotation:review-puzzle", uid="str") == "/review/{uid}/"

"""What leaves a run: gradebook, feedback, LMS exports, class summary, copy flags."""

from django.apps import AppConfig


class PracticeConfig(AppConfig):
    name = "practice"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lessons import learner_data
        from practice.learner_data import PracticeLearnerData

        learner_data.register(PracticeLearnerData())

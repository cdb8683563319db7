from django.contrib import admin

from lessons.models import Area, Flashcard, Lesson, Question, Subject


class AreaInline(admin.TabularInline):
    model = Area
    extra = 0
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "position"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [AreaInline]


@admin.register(Area)
class AreaAdmin(admin.ModelAdmin):
    list_display = ["name", "subject", "position"]
    list_filter = ["subject"]
    search_fields = ["name"]


class QuestionInline(admin.StackedInline):
    model = Question
    extra = 0
    max_num = 8


class FlashcardInline(admin.TabularInline):
    model = Flashcard
    extra = 0


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    list_display = ["title", "public_id", "subject", "area", "status", "updated_at"]
    list_filter = ["status", "subject", "area", "updated_at"]
    search_fields = ["title", "summary", "public_id"]
    prepopulated_fields = {"slug": ["title"]}
    autocomplete_fields = ["needs_first", "connections"]
    readonly_fields = ["public_id", "updated_at"]
    inlines = [QuestionInline, FlashcardInline]
    list_select_related = ["subject", "area"]

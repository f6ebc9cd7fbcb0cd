func main() {
	if ok {
		return 1
	}
}

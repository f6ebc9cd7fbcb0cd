func main() {
	if ok {
		return
	}
}
